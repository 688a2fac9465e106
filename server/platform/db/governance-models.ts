/**
 * Models of the governance tables (migration 0002): members, guardrails and their assignments,
 * BYOK credentials, private endpoints, PKCE apps and codes. Money is integer micro-dollars,
 * returned by `pg` as strings; NUMERIC prices are strings too.
 *
 * @module
 */
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from "sequelize";
import type { JsonObject } from "@bufbuild/protobuf";

export class MemberRow extends Model<InferAttributes<MemberRow>, InferCreationAttributes<MemberRow>> {
  declare id: string;
  declare organizationId: string;
  declare email: string;
  declare firstName: CreationOptional<string | null>;
  declare lastName: CreationOptional<string | null>;
  declare role: string;
  declare createdAt: CreationOptional<Date>;
}

/** One built-in content filter as stored in `content_filter_builtins`. */
export interface StoredContentFilterBuiltin {
  slug: string;
  label: string;
  action: string;
}

export class GuardrailRow extends Model<InferAttributes<GuardrailRow>, InferCreationAttributes<GuardrailRow>> {
  declare id: CreationOptional<string>;
  declare organizationId: string;
  declare workspaceId: string;
  declare name: string;
  declare description: CreationOptional<string | null>;
  declare limitMicros: CreationOptional<string | null>;
  declare resetInterval: CreationOptional<string | null>;
  declare includeByokInBudgets: CreationOptional<boolean>;
  declare allowedModels: CreationOptional<string[] | null>;
  declare ignoredModels: CreationOptional<string[] | null>;
  declare allowedProviders: CreationOptional<string[] | null>;
  declare ignoredProviders: CreationOptional<string[] | null>;
  declare allowedDataRegions: CreationOptional<string[] | null>;
  declare enforceZdr: CreationOptional<boolean | null>;
  declare enforceZdrAnthropic: CreationOptional<boolean | null>;
  declare enforceZdrGoogle: CreationOptional<boolean | null>;
  declare enforceZdrOpenai: CreationOptional<boolean | null>;
  declare enforceZdrOther: CreationOptional<boolean | null>;
  declare enforceZdrXai: CreationOptional<boolean | null>;
  declare enableFreeModelPublication: CreationOptional<boolean>;
  declare enableFreeModelTraining: CreationOptional<boolean>;
  declare enablePaidModelTraining: CreationOptional<boolean>;
  declare contentFilterBuiltins: CreationOptional<StoredContentFilterBuiltin[]>;
  /** JSON objects, kept as given. */
  declare contentFilters: CreationOptional<JsonObject[] | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date | null>;
}

export class GuardrailKeyAssignmentRow extends Model<
  InferAttributes<GuardrailKeyAssignmentRow>,
  InferCreationAttributes<GuardrailKeyAssignmentRow>
> {
  declare id: CreationOptional<string>;
  declare guardrailId: string;
  declare keyHash: string;
  declare assignedBy: string;
  declare createdAt: CreationOptional<Date>;
}

export class GuardrailMemberAssignmentRow extends Model<
  InferAttributes<GuardrailMemberAssignmentRow>,
  InferCreationAttributes<GuardrailMemberAssignmentRow>
> {
  declare id: CreationOptional<string>;
  declare guardrailId: string;
  declare userId: string;
  declare assignedBy: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
}

export class ByokCredentialRow extends Model<
  InferAttributes<ByokCredentialRow>,
  InferCreationAttributes<ByokCredentialRow>
> {
  declare id: CreationOptional<string>;
  declare organizationId: string;
  declare workspaceId: string;
  declare provider: string;
  declare name: CreationOptional<string | null>;
  declare label: string;
  /** AES-256-GCM sealed key (see server/platform/secrets/secret-box.ts), bound to the row id. */
  declare sealedKey: Buffer;
  declare disabled: CreationOptional<boolean>;
  declare createdAt: CreationOptional<Date>;
}

export class PrivateEndpointRow extends Model<
  InferAttributes<PrivateEndpointRow>,
  InferCreationAttributes<PrivateEndpointRow>
> {
  declare id: CreationOptional<string>;
  declare organizationId: string;
  declare modelPermaslug: string;
  declare modelSlug: string;
  declare modelName: string;
  declare providerSlug: string;
  declare providerName: string;
  declare upstreamModelId: string;
  declare baseUrl: CreationOptional<string | null>;
  declare declaredRegion: CreationOptional<string | null>;
  declare declaredZdr: CreationOptional<boolean>;
  /** NUMERIC USD per token, as strings. */
  declare pricingPrompt: CreationOptional<string | null>;
  declare pricingCompletion: CreationOptional<string | null>;
  /** Prompt cache prices; null: the prompt price applies. */
  declare pricingInputCacheRead: CreationOptional<string | null>;
  declare pricingInputCacheWrite: CreationOptional<string | null>;
  declare status: CreationOptional<string>;
  declare validatedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date | null>;
}

export class AuthAppRow extends Model<InferAttributes<AuthAppRow>, InferCreationAttributes<AuthAppRow>> {
  /** BIGINT identity, returned by `pg` as a string. */
  declare id: CreationOptional<string>;
  declare organizationId: string;
  declare origin: string;
  declare name: string;
  declare createdAt: CreationOptional<Date>;
}

export class AuthCodeRow extends Model<InferAttributes<AuthCodeRow>, InferCreationAttributes<AuthCodeRow>> {
  declare codeHash: string;
  declare organizationId: string;
  declare appId: string;
  declare workspaceId: string;
  declare creatorUserId: CreationOptional<string | null>;
  declare callbackUrl: string;
  declare codeChallenge: CreationOptional<string | null>;
  declare codeChallengeMethod: CreationOptional<string | null>;
  declare limitMicros: CreationOptional<string | null>;
  declare limitReset: CreationOptional<string | null>;
  declare keyExpiresAt: CreationOptional<Date | null>;
  declare keyLabel: string;
  declare spawnAgent: CreationOptional<string | null>;
  declare spawnCloud: CreationOptional<string | null>;
  /** When the code itself stops being exchangeable (10 minutes after creation). */
  declare expiresAt: Date;
  declare usedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
}

// Column definitions are built fresh for every attribute: Sequelize writes the column name into
// the object it is given, so one object shared by two attributes maps both to the same column.
const common = { underscored: true, timestamps: false } as const;
const createdAt = () => ({ type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW });
const updatedAt = () => ({ type: DataTypes.DATE, allowNull: true });
const uuidKey = () => ({ type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 });
const text = () => ({ type: DataTypes.TEXT });
const requiredText = () => ({ type: DataTypes.TEXT, allowNull: false });
const textList = () => ({ type: DataTypes.ARRAY(DataTypes.TEXT) });
const flag = (defaultValue: boolean) => ({ type: DataTypes.BOOLEAN, allowNull: false, defaultValue });
const optionalFlag = () => ({ type: DataTypes.BOOLEAN });

export function initGovernanceModels(sequelize: Sequelize): void {
  MemberRow.init(
    {
      id: { type: DataTypes.TEXT, primaryKey: true },
      organizationId: { type: DataTypes.UUID, allowNull: false },
      email: requiredText(),
      firstName: text(),
      lastName: text(),
      role: requiredText(),
      createdAt: createdAt(),
    },
    { ...common, sequelize, tableName: "members" },
  );

  GuardrailRow.init(
    {
      id: uuidKey(),
      organizationId: { type: DataTypes.UUID, allowNull: false },
      workspaceId: { type: DataTypes.UUID, allowNull: false },
      name: requiredText(),
      description: text(),
      limitMicros: { type: DataTypes.BIGINT },
      resetInterval: text(),
      includeByokInBudgets: flag(false),
      allowedModels: textList(),
      ignoredModels: textList(),
      allowedProviders: textList(),
      ignoredProviders: textList(),
      allowedDataRegions: textList(),
      enforceZdr: optionalFlag(),
      enforceZdrAnthropic: optionalFlag(),
      enforceZdrGoogle: optionalFlag(),
      enforceZdrOpenai: optionalFlag(),
      enforceZdrOther: optionalFlag(),
      enforceZdrXai: optionalFlag(),
      enableFreeModelPublication: flag(false),
      enableFreeModelTraining: flag(false),
      enablePaidModelTraining: flag(false),
      contentFilterBuiltins: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
      contentFilters: { type: DataTypes.JSONB },
      createdAt: createdAt(),
      updatedAt: updatedAt(),
    },
    { ...common, sequelize, tableName: "guardrails" },
  );

  GuardrailKeyAssignmentRow.init(
    {
      id: uuidKey(),
      guardrailId: { type: DataTypes.UUID, allowNull: false },
      keyHash: { type: DataTypes.CHAR(64), allowNull: false },
      assignedBy: requiredText(),
      createdAt: createdAt(),
    },
    { ...common, sequelize, tableName: "guardrail_key_assignments" },
  );

  GuardrailMemberAssignmentRow.init(
    {
      id: uuidKey(),
      guardrailId: { type: DataTypes.UUID, allowNull: false },
      userId: requiredText(),
      assignedBy: text(),
      createdAt: createdAt(),
    },
    { ...common, sequelize, tableName: "guardrail_member_assignments" },
  );

  ByokCredentialRow.init(
    {
      id: uuidKey(),
      organizationId: { type: DataTypes.UUID, allowNull: false },
      workspaceId: { type: DataTypes.UUID, allowNull: false },
      provider: requiredText(),
      name: text(),
      label: requiredText(),
      sealedKey: { type: DataTypes.BLOB, allowNull: false },
      disabled: flag(false),
      createdAt: createdAt(),
    },
    { ...common, sequelize, tableName: "byok_credentials" },
  );

  PrivateEndpointRow.init(
    {
      id: uuidKey(),
      organizationId: { type: DataTypes.UUID, allowNull: false },
      modelPermaslug: requiredText(),
      modelSlug: requiredText(),
      modelName: requiredText(),
      providerSlug: requiredText(),
      providerName: requiredText(),
      upstreamModelId: requiredText(),
      baseUrl: text(),
      declaredRegion: text(),
      declaredZdr: flag(false),
      pricingPrompt: { type: DataTypes.DECIMAL },
      pricingCompletion: { type: DataTypes.DECIMAL },
      pricingInputCacheRead: { type: DataTypes.DECIMAL },
      pricingInputCacheWrite: { type: DataTypes.DECIMAL },
      status: { type: DataTypes.TEXT, allowNull: false, defaultValue: "draft" },
      validatedAt: { type: DataTypes.DATE },
      createdAt: createdAt(),
      updatedAt: updatedAt(),
    },
    { ...common, sequelize, tableName: "private_endpoints" },
  );

  AuthAppRow.init(
    {
      id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true },
      organizationId: { type: DataTypes.UUID, allowNull: false },
      origin: requiredText(),
      name: requiredText(),
      createdAt: createdAt(),
    },
    { ...common, sequelize, tableName: "auth_apps" },
  );

  AuthCodeRow.init(
    {
      codeHash: { type: DataTypes.CHAR(64), primaryKey: true },
      organizationId: { type: DataTypes.UUID, allowNull: false },
      appId: { type: DataTypes.BIGINT, allowNull: false },
      workspaceId: { type: DataTypes.UUID, allowNull: false },
      creatorUserId: text(),
      callbackUrl: requiredText(),
      codeChallenge: text(),
      codeChallengeMethod: text(),
      limitMicros: { type: DataTypes.BIGINT },
      limitReset: text(),
      keyExpiresAt: { type: DataTypes.DATE },
      keyLabel: requiredText(),
      spawnAgent: text(),
      spawnCloud: text(),
      expiresAt: { type: DataTypes.DATE, allowNull: false },
      usedAt: { type: DataTypes.DATE },
      createdAt: createdAt(),
    },
    { ...common, sequelize, tableName: "auth_codes" },
  );
}

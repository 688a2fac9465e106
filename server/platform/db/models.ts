/**
 * Sequelize models of the tables created by the migrations (the migrations own the schema; models
 * never sync). Money columns are integer micro-dollars, which `pg` returns as strings.
 *
 * @module
 */
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type NonAttribute,
  type Sequelize,
} from "sequelize";
import { initGovernanceModels } from "./governance-models.js";

export class OrganizationRow extends Model<InferAttributes<OrganizationRow>, InferCreationAttributes<OrganizationRow>> {
  declare id: CreationOptional<string>;
  declare name: string;
  declare isFilteredModelCatalogEnabled: CreationOptional<boolean>;
  declare entitlements: CreationOptional<string[]>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date | null>;
}

export class WorkspaceRow extends Model<InferAttributes<WorkspaceRow>, InferCreationAttributes<WorkspaceRow>> {
  declare id: CreationOptional<string>;
  declare organizationId: string;
  declare name: string;
  declare slug: string;
  declare description: CreationOptional<string | null>;
  declare createdBy: string;
  declare defaultGuardrailId: CreationOptional<string | null>;
  declare defaultImageModel: CreationOptional<string | null>;
  declare defaultTextModel: CreationOptional<string | null>;
  declare defaultProviderSort: CreationOptional<string | null>;
  declare disabledServerTools: CreationOptional<string[] | null>;
  declare includeByokInBudgets: CreationOptional<boolean>;
  declare ioLoggingApiKeyIds: CreationOptional<string[] | null>;
  /** NUMERIC, returned by `pg` as a string. */
  declare ioLoggingSamplingRate: CreationOptional<string>;
  declare isDataDiscountLoggingEnabled: CreationOptional<boolean>;
  declare isObservabilityBroadcastEnabled: CreationOptional<boolean>;
  declare isObservabilityIoLoggingEnabled: CreationOptional<boolean>;
  /** The response cache TTL of calls that ask for none (seconds); null: not cached. */
  declare cacheTtlSeconds: CreationOptional<number | null>;
  /** The request and token limits per minute of all the workspace's keys together (docs/api/limits.md); null: none. */
  declare rateLimitRequestsPerMinute: CreationOptional<number | null>;
  declare rateLimitTokensPerMinute: CreationOptional<number | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date | null>;
}

export class ApiKeyRow extends Model<InferAttributes<ApiKeyRow>, InferCreationAttributes<ApiKeyRow>> {
  declare hash: string;
  declare organizationId: string;
  declare workspaceId: string;
  declare creatorUserId: CreationOptional<string | null>;
  declare name: string;
  declare label: string;
  declare isManagement: CreationOptional<boolean>;
  declare disabled: CreationOptional<boolean>;
  declare limitMicros: CreationOptional<string | null>;
  declare limitReset: CreationOptional<string | null>;
  declare includeByokInLimit: CreationOptional<boolean>;
  declare expiresAt: CreationOptional<Date | null>;
  /**
   * Set on an intern's own key (created at provisioning): the key acts for that intern only
   * (platform/rpc/scope.ts).
   */
  declare internId: CreationOptional<string | null>;
  /** The key's request and token limits per minute (docs/api/limits.md); null: none. */
  declare rateLimitRequestsPerMinute: CreationOptional<number | null>;
  declare rateLimitTokensPerMinute: CreationOptional<number | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date | null>;
  /** Loaded with `include` by authentication. */
  declare organization?: NonAttribute<OrganizationRow>;
}

export class WorkspaceBudgetRow extends Model<
  InferAttributes<WorkspaceBudgetRow>,
  InferCreationAttributes<WorkspaceBudgetRow>
> {
  declare id: CreationOptional<string>;
  declare workspaceId: string;
  declare interval: string;
  declare limitMicros: string;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date | null>;
}

export class EndUserRow extends Model<InferAttributes<EndUserRow>, InferCreationAttributes<EndUserRow>> {
  declare organizationId: string;
  declare user: string;
  declare isActive: CreationOptional<boolean>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

// Fresh objects per attribute: Sequelize writes the column name into the definition it is given.
const common = { underscored: true, timestamps: false } as const;
const createdAt = () => ({ type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW });
const updatedAt = () => ({ type: DataTypes.DATE, allowNull: true });
const uuidKey = () => ({ type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 });

export function initModels(sequelize: Sequelize): void {
  initGovernanceModels(sequelize);
  OrganizationRow.init(
    {
      id: uuidKey(),
      name: { type: DataTypes.TEXT, allowNull: false },
      isFilteredModelCatalogEnabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      entitlements: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false, defaultValue: [] },
      createdAt: createdAt(),
      updatedAt: updatedAt(),
    },
    { ...common, sequelize, tableName: "organizations" },
  );

  WorkspaceRow.init(
    {
      id: uuidKey(),
      organizationId: { type: DataTypes.UUID, allowNull: false },
      name: { type: DataTypes.TEXT, allowNull: false },
      slug: { type: DataTypes.TEXT, allowNull: false },
      description: { type: DataTypes.TEXT },
      createdBy: { type: DataTypes.TEXT, allowNull: false },
      defaultGuardrailId: { type: DataTypes.UUID },
      defaultImageModel: { type: DataTypes.TEXT },
      defaultTextModel: { type: DataTypes.TEXT },
      defaultProviderSort: { type: DataTypes.TEXT },
      disabledServerTools: { type: DataTypes.ARRAY(DataTypes.TEXT) },
      includeByokInBudgets: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      ioLoggingApiKeyIds: { type: DataTypes.ARRAY(DataTypes.TEXT) },
      ioLoggingSamplingRate: { type: DataTypes.DECIMAL(5, 4), allowNull: false, defaultValue: "1" },
      isDataDiscountLoggingEnabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      isObservabilityBroadcastEnabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      isObservabilityIoLoggingEnabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      cacheTtlSeconds: { type: DataTypes.INTEGER },
      rateLimitRequestsPerMinute: { type: DataTypes.INTEGER },
      rateLimitTokensPerMinute: { type: DataTypes.INTEGER },
      createdAt: createdAt(),
      updatedAt: updatedAt(),
    },
    { ...common, sequelize, tableName: "workspaces" },
  );

  ApiKeyRow.init(
    {
      hash: { type: DataTypes.CHAR(64), primaryKey: true },
      organizationId: { type: DataTypes.UUID, allowNull: false },
      workspaceId: { type: DataTypes.UUID, allowNull: false },
      creatorUserId: { type: DataTypes.TEXT },
      name: { type: DataTypes.TEXT, allowNull: false },
      label: { type: DataTypes.TEXT, allowNull: false },
      isManagement: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      disabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      limitMicros: { type: DataTypes.BIGINT },
      limitReset: { type: DataTypes.TEXT },
      includeByokInLimit: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      expiresAt: { type: DataTypes.DATE },
      internId: { type: DataTypes.UUID },
      rateLimitRequestsPerMinute: { type: DataTypes.INTEGER },
      rateLimitTokensPerMinute: { type: DataTypes.INTEGER },
      createdAt: createdAt(),
      updatedAt: updatedAt(),
    },
    { ...common, sequelize, tableName: "api_keys" },
  );
  ApiKeyRow.belongsTo(OrganizationRow, { as: "organization", foreignKey: "organizationId" });

  WorkspaceBudgetRow.init(
    {
      id: uuidKey(),
      workspaceId: { type: DataTypes.UUID, allowNull: false },
      interval: { type: DataTypes.TEXT, allowNull: false },
      limitMicros: { type: DataTypes.BIGINT, allowNull: false },
      createdAt: createdAt(),
      updatedAt: updatedAt(),
    },
    { ...common, sequelize, tableName: "workspace_budgets" },
  );

  EndUserRow.init(
    {
      organizationId: { type: DataTypes.UUID, primaryKey: true },
      user: { type: DataTypes.TEXT, primaryKey: true },
      isActive: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      createdAt: createdAt(),
      updatedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
    },
    { ...common, sequelize, tableName: "end_users" },
  );
}

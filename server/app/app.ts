import { setMaxListeners } from "node:events";
import type http from "node:http";
import type http2 from "node:http2";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Sequelize } from "sequelize";
import { createFacade } from "../../facade/facade.js";
import { bootstrap, showBootstrapKey } from "./bootstrap.js";
import type { Catalog } from "../engine/catalog/catalog.js";
import { syncCatalog } from "../engine/catalog/catalog-sync.js";
import { loadCatalogFile } from "../engine/catalog/catalog-file.js";
import type { GatewayConfig } from "../platform/config.js";
import { createDirectTransport } from "../platform/rpc/direct-transport.js";
import { coreInterceptors } from "./interceptor-chain.js";
import { loadLocalSecrets } from "../platform/secrets/local-secrets.js";
import { openDatabase } from "../platform/db/database.js";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../platform/db/embedded-postgres.js";
import type { Deps } from "../services/deps.js";
import { createGovernanceCache } from "../engine/governance/governance-cache.js";
import { openNotificationFeed } from "../platform/db/notification-feed.js";
import { KeyPools } from "../engine/key-pools/key-pools.js";
import { ResponseCache } from "../engine/response-cache/response-cache.js";
import { startCacheSweeper } from "../engine/response-cache/cache-sweeper.js";
import type { KeyHealth } from "../engine/key-pools/key-pool.js";
import { shellEgressFor } from "../services/interns/shell-egress.js";
import type { Logger } from "../platform/logger.js";
import { startBatchRunner } from "../services/batches/batch-runner.js";
import { once, stopInPhases } from "../platform/lifecycle.js";
import { shutdownPhases } from "./shutdown.js";
import { newLeaseOwner } from "../platform/workers/lease-owner.js";
import { SettlementWriter } from "../engine/usage/settlement-writer.js";
import { assembleEngine } from "./engine-assembly.js";
import { createInternHosts } from "../services/interns/host-manager.js";
import type { InternHosts } from "../services/interns/intern-hosts.js";
import { internLifecycle } from "../services/interns/intern-lifecycle.js";
import { startInternSupervisor } from "../services/interns/intern-supervisor.js";
import { createBlobStore } from "../platform/storage/blob-stores.js";
import { closeConfigFile, closeDataDir, closeKeyFile } from "../platform/storage/private-paths.js";
import { PortEndpoints } from "./port-endpoints.js";
import { addApiDocsEndpoints } from "./api-docs-endpoints.js";
import { addConsoleEndpoints } from "./console-endpoints.js";
import { GatewayMetrics } from "./metrics.js";
import { batchItemCounts } from "./metrics-batch-items.js";
import { countItemsOfRunningBatches } from "../services/batches/batch-store-counts.js";
import { metricsEndpoint } from "./metrics-endpoint.js";
import { accessLog } from "../platform/observability/access-log.js";
import { composeObservers } from "../platform/observability/observers.js";
import { endRestSpan, handleInSpan } from "../platform/observability/rest-spans.js";
import { startTracing } from "../platform/observability/tracing.js";
import { registerGrpcInfrastructure } from "./grpc-infrastructure.js";
import { emptyCatalogWarning } from "../engine/catalog/empty-catalog.js";
import { addHealthEndpoints } from "./health-endpoints.js";
import { checkPortsFree, listenOn, urlOf } from "./ports.js";
import { createReadiness, type Readiness } from "./readiness.js";
import { allServices } from "../../wire/services.js";
import { implementations, registerServices, servedServices, type Implementations } from "./services.js";
import { DEFAULT_MAX_BODY_BYTES } from "../../wire/body-limits.js";
import { doorAdmission } from "./door-admission.js";
import { rpcDoor } from "./rpc-door.js";
import { limitedHttp2Server, limitedHttpServer } from "./server-limits.js";
import { secretsForUrl } from "../services/interns/vault/vault-release.js";
import { startVideoPoller, type VideoPoller } from "../services/videos/video-poller.js";

/** The path of a Connect or gRPC-Web call: a package-qualified service name, then the method. */
const RPC_PATH = /^\/[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\/[A-Za-z_]\w*(?:\?|$)/;

export interface Gateway {
  /** REST facade + Connect/gRPC-Web base URL, e.g. http://127.0.0.1:8080 */
  httpUrl: string;
  /** gRPC (h2c) base URL. */
  grpcUrl: string;
  sequelize: Sequelize;
  /** What the services were built from (tests inspect the implementations). */
  deps: Deps;
  /** The service implementations (tests check which methods exist). */
  impls: Implementations;
  /** This instance's video job poller (tests drive it with `runOnce` when its loop is off). */
  videos: VideoPoller;
  /** What GET /readyz answers from (readiness.ts). */
  readiness: Readiness;
  /** Drains and stops the instance in ordered phases (shutdown.ts); a second call waits for the first. */
  stop(): Promise<void>;
}

/** How startGateway serves. */
export interface GatewayOptions {
  /** The HTTP port serves Connect/gRPC-Web but no REST (run cmd/facade.ts beside it). */
  coreOnly?: boolean;
  /** The intern runtime; tests may bring their own (test/support/interns-hosts.ts). */
  internHosts?: InternHosts;
  /**
   * A cluster worker (GATEWAY_WORKERS above 1): its primary ran `prepareStart` once for every
   * worker (cluster-primary.ts) and gave it the database in DATABASE_URL, so this start only reads
   * the catalog and opens the database. Closing the data directory again would shut out a root
   * gateway's embedded PostgreSQL, which the primary let through.
   */
  preparedByPrimary?: boolean;
  /**
   * The clock the key pools read (server/engine/key-pools); tests move it past a refused key's
   * probe back-off instead of waiting.
   */
  keyPoolClock?: () => number;
}

/** What a start does once before anything serves; a cluster's primary does it for all its workers. */
export interface PreparedStart {
  catalog: Catalog;
  databaseUrl: string;
  sequelize: Sequelize;
  /** Started here when DATABASE_URL is unset; whoever prepared it stops it. */
  embedded: EmbeddedPostgres | undefined;
  /** A key generated by the first start: shown once the ports are bound, or before a failed start ends. */
  generatedKey: string | undefined;
}

/** The two listeners' ports, each with the setting that chooses it. */
function listenerPorts(config: GatewayConfig) {
  return {
    http: { setting: "PORT", port: config.port },
    grpc: { setting: "GRPC_PORT", port: config.grpcPort },
  } as const;
}

/**
 * Database (embedded unless DATABASE_URL), migrations and bootstrap, after the checks that must
 * stop a start before them.
 */
export async function prepareStart(config: GatewayConfig, log: Logger): Promise<PreparedStart> {
  for (const deprecation of config.deprecations) log.warn(deprecation);
  // A broken catalog file stops the start before anything else is touched.
  const catalog = await loadCatalogFile(config.catalogFile, process.env);
  if (catalog.models.size === 0) log.warn(emptyCatalogWarning(config.catalogFile));
  // So does a port another process holds, before PostgreSQL is started or migrated (ports.ts).
  const ports = listenerPorts(config);
  await checkPortsFree(config.host, [ports.http, ports.grpc]);
  // Closed to other users (private-paths.ts); the embedded database does it itself, letting its own user through.
  await closeConfigFile(config.catalogFile, log);
  for (const provider of catalog.providers.values()) {
    const keyFile = provider.settings?.googleServiceAccount?.keyFile;
    if (keyFile) await closeKeyFile(keyFile, `the google_service_account key file of provider '${provider.slug}'`, log);
  }
  if (config.databaseUrl) await closeDataDir(config.dataDir, log);
  const embedded: EmbeddedPostgres | undefined = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, log);
  try {
    const databaseUrl = config.databaseUrl ?? embedded!.url;
    const sequelize = await openDatabase(databaseUrl, log);
    return { catalog, databaseUrl, sequelize, embedded, generatedKey: await bootstrap(sequelize, config, log) };
  } catch (err) {
    await embedded?.stop();
    throw err;
  }
}

/** A cluster worker's share of the start: its primary prepared the rest. */
async function joinPrepared(config: GatewayConfig, log: Logger): Promise<PreparedStart> {
  if (!config.databaseUrl) throw new Error("a cluster worker starts with the DATABASE_URL its primary gives it");
  const catalog = await loadCatalogFile(config.catalogFile, process.env);
  return {
    catalog,
    databaseUrl: config.databaseUrl,
    sequelize: await openDatabase(config.databaseUrl, log),
    embedded: undefined,
    generatedKey: undefined,
  };
}

/**
 * Starts the whole gateway in one process: database (embedded unless DATABASE_URL), migrations,
 * bootstrap, the core on the gRPC port, and REST + Connect on the HTTP port, where the facade calls
 * the core in-process through the direct transport (platform/rpc/direct-transport.ts) with the same interceptors.
 */
export async function startGateway(config: GatewayConfig, log: Logger, options: GatewayOptions = {}): Promise<Gateway> {
  const { catalog, databaseUrl, sequelize, embedded, ...prepared } = options.preparedByPrimary
    ? await joinPrepared(config, log)
    : await prepareStart(config, log);
  const ports = listenerPorts(config);
  let generatedKey = prepared.generatedKey;
  // Before anything can start an intern host, so that its shell is held from its first command; it
  // never throws (server/services/interns/shell-egress.ts).
  const shellEgress = await shellEgressFor(config, databaseUrl, log);
  try {
    const secrets = await loadLocalSecrets(config);
    await syncCatalog(sequelize, catalog);
    // Word from the other instances: governance changes, key pool health.
    const notifications = await openNotificationFeed(databaseUrl, log, config.governanceFeedCheckMs);
    const governance = createGovernanceCache(sequelize, notifications);
    // Behind GET /readyz and gRPC health alike.
    const readiness = createReadiness({ sequelize, governance, log });
    // The hosts' model calls come back to this instance's REST listener, known once it listens;
    // their fetch tool must reach none of its ports.
    let ownUrl = "";
    let ownPorts: number[] = [];
    const internHosts =
      options.internHosts ??
      createInternHosts({
        config,
        log,
        sequelize,
        masterKey: secrets.masterKey,
        releaseSecrets: (internId, url) => secretsForUrl({ sequelize, secrets }, internId, url),
        gatewayUrl: () => ownUrl,
        gatewayPorts: () => ownPorts,
        shellPorts: shellEgress,
      });
    // One name for this instance's admission leases and the settlements that consume them.
    const owner = newLeaseOwner();
    // This instance's metrics (GET /metrics); the facade's open streams are read at scrape time, once it exists.
    const metrics = new GatewayMetrics({
      openStreams: (): number => facade?.openStreams ?? 0,
      batchItems: batchItemCounts(() => countItemsOfRunningBatches(sequelize), log),
      keyHealth: (): Map<string, KeyHealth[]> => keyPools.health(),
    });
    const settlement = new SettlementWriter(databaseUrl, owner, config.settlement, log, metrics.settlement);
    const observers = { inference: metrics.inference, admission: metrics.admission };
    const keyPools = new KeyPools(catalog.providers.values(), log, notifications, {
      cooldownMaxMs: config.keyCooldownMaxSeconds * 1000,
      observer: metrics.keyPools,
      now: options.keyPoolClock,
    });
    const responseCache = new ResponseCache(sequelize, config.cache, log, metrics.responseCache);
    const engine = assembleEngine(
      { config, log, sequelize, secrets, catalog, governance, keyPools, responseCache, settlement, observers },
      owner,
    );
    const blobs = createBlobStore(config.storage, log);
    const deps: Deps = { config, log, sequelize, secrets, notifications, engine, blobs, internHosts };
    const batches = startBatchRunner(deps);
    const videos = startVideoPoller(deps);
    const cacheSweeper = startCacheSweeper(responseCache, config.cache, log);
    const interns = internLifecycle(deps);
    const impls = implementations(deps, { batches, videos, interns });
    const routes = (router: ConnectRouter) => {
      registerServices(router, impls);
      // Health and reflection, public: outside the gateway's interceptors (grpc-infrastructure.ts).
      registerGrpcInfrastructure(router, { services: allServices, readiness, reflection: config.grpcReflection });
    };
    // Told of every finished exchange: REST by the facade, calls over the network by the core's first interceptor.
    const observe = composeObservers(log, accessLog(log), endRestSpan, metrics.observeExchange);
    const interceptors = coreInterceptors(deps, observe);
    const shutdown = new AbortController();
    // Every call in flight listens on it; the default cap of 10 listeners is not a leak signal here.
    setMaxListeners(0, shutdown.signal);
    // The core in-process: the facade's calls, and the questions the RPC door asks before it reads a call.
    const core = createDirectTransport(servedServices(impls), { interceptors, shutdownSignal: shutdown.signal });
    const rpc = rpcDoor({
      routes,
      interceptors,
      shutdownSignal: shutdown.signal,
      // Health and reflection, registered without a limit of their own: the default.
      readMaxBytes: DEFAULT_MAX_BODY_BYTES,
      admit: doorAdmission(allServices, core),
      log,
    });

    const grpcServer = limitedHttp2Server(config.listeners, rpc);
    const sessions = new Set<http2.ServerHttp2Session>();
    grpcServer.on("session", (session) => {
      sessions.add(session);
      session.once("close", () => sessions.delete(session));
    });
    const facade = options.coreOnly
      ? undefined
      : createFacade({
          services: allServices,
          transport: core,
          log,
          sseKeepaliveMs: config.sseKeepaliveMs,
          observe,
        });
    // Operational paths outside /api/v1 (port-endpoints.ts).
    const portEndpoints = new PortEndpoints();
    if (facade) addApiDocsEndpoints(portEndpoints);
    if (facade) addConsoleEndpoints(portEndpoints);
    addHealthEndpoints(portEndpoints, readiness);
    portEndpoints.add("/metrics", metricsEndpoint(metrics, config.metricsToken, log));
    const httpServer = limitedHttpServer(config.listeners, (req, res) => {
      if (portEndpoints.handle(req, res, log)) return;
      // Connect and gRPC-Web calls are `/<package>.<Service>/<Method>`; every other path is the
      // facade's, which answers what it has no route for with the JSON error envelope.
      if (facade && !RPC_PATH.test(req.url ?? "")) handleInSpan(facade.handle, req, res);
      else rpc(req, res);
    });

    await listenOn(grpcServer, ports.grpc, config.host, config.listeners.listenBacklog);
    await listenOn(httpServer, ports.http, config.host, config.listeners.listenBacklog);
    // Once the ports are bound: a start that fails has no exporter to stop (server/platform/observability/tracing.ts).
    const tracing = await startTracing(config.tracing, log);
    const httpUrl = urlOf(httpServer);
    ownUrl = httpUrl;
    ownPorts = [httpUrl, urlOf(grpcServer)].map((url) => Number(new URL(url).port));
    // Closed to the interns' shells as their fetch tool closes them, before a host can start.
    for (const port of ownPorts) await shellEgress.closePort(port);
    // Once listening: the hosts it starts call back into this instance.
    const internSupervisor = startInternSupervisor(deps, interns);
    const grpcUrl = urlOf(grpcServer);
    const api = facade ? { api: `${httpUrl}/api/v1` } : {};
    log.info(
      {
        http: httpUrl,
        grpc: grpcUrl,
        ...api,
        endpoints: portEndpoints.paths().map((path) => httpUrl + path),
        coreOnly: options.coreOnly ?? false,
      },
      "gateway listening",
    );
    if (generatedKey) showBootstrapKey(generatedKey, log);
    generatedKey = undefined;

    return {
      httpUrl,
      grpcUrl,
      sequelize,
      deps,
      impls,
      videos,
      readiness,
      stop: once(async () => {
        log.info("draining");
        // First: load balancers see /readyz (and gRPC health) fail while the listeners still answer.
        readiness.startDraining();
        const timer = setTimeout(() => {
          shutdown.abort();
          httpServer.closeAllConnections();
          for (const session of sessions) session.destroy();
        }, config.shutdownGraceMs);
        facade?.stop();
        const phases = shutdownPhases({
          internSupervisor,
          internHosts: { stop: () => internHosts.close() },
          shellEgress,
          // The calls in flight end within the grace period, or are cut off when it ends.
          listeners: [
            {
              stop: async () => {
                await Promise.all([closeHttp(httpServer), closeHttp2(grpcServer, sessions)]);
                clearTimeout(timer);
              },
            },
          ],
          workers: [batches, videos, cacheSweeper],
          settlement,
          cacheWrites: responseCache,
          leases: engine.leases,
          notifications,
          database: { stop: () => sequelize.close() },
          embeddedDatabase: embedded,
          tracing,
        });
        await stopInPhases(phases, log);
        log.info("stopped");
      }),
    };
  } catch (err) {
    if (generatedKey) showBootstrapKey(generatedKey, log);
    await shellEgress.stop();
    await embedded?.stop();
    throw err;
  }
}

function closeHttp(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** http2 servers close once every session has ended; idle sessions are told to go away. */
function closeHttp2(server: http2.Http2Server, sessions: Set<http2.ServerHttp2Session>): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    for (const session of sessions) session.close();
  });
}

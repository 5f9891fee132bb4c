/**
 * The dependency table of docs/architecture.md (ARCHITECTURE §2), enforced. Each rule's comment is
 * the message a developer sees: it says what to do instead.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'Import cycle. Move the shared piece into the lower package (core or contracts) or pass it in as a dependency.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-is-pure',
      severity: 'error',
      comment:
        'packages/core is the pure domain: no I/O, no node:* modules, no other Sandcast package. Do the I/O in db or apps/server and pass values in.',
      from: { path: '^packages/core/' },
      to: {
        path: ['^packages/(?!core/)', '^apps/', '^node:', '^(fs|path|child_process|net|http|os|crypto)$'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'core-no-npm-packages',
      severity: 'error',
      comment:
        'packages/core depends on nothing: no npm package, not even for types. Keep the domain in plain TypeScript; a library that does I/O or parsing (pg, zod, …) belongs in db, contracts or apps/server, which pass plain values in.',
      from: { path: '^packages/core/', pathNot: '\\.test\\.ts$' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'core-no-node-builtins',
      severity: 'error',
      comment: 'packages/core must not use Node built-ins. Take values as parameters instead.',
      from: { path: '^packages/core/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'contracts-imports-core-only',
      severity: 'error',
      comment: 'packages/contracts may import only core (and zod). Put server logic in apps/server, provider types in provider-sdk.',
      from: { path: '^packages/contracts/' },
      to: { path: '^packages/(?!contracts/|core/)|^apps/' },
    },
    {
      name: 'provider-sdk-imports-core-only',
      severity: 'error',
      comment: 'packages/provider-sdk may import only core types. Providers must not depend on the server or the database.',
      from: { path: '^packages/provider-sdk/' },
      to: { path: '^packages/(?!provider-sdk/|core/)|^apps/' },
    },
    {
      name: 'providers-import-sdk-only',
      severity: 'error',
      comment:
        'A provider may import only @sandcast/provider-sdk and its own vendor SDK. Share code through provider-sdk, not through another provider or the server.',
      from: { path: '^packages/providers/([^/]+)/' },
      to: { path: ['^packages/(?!provider-sdk/|providers/$1/)', '^apps/'] },
    },
    {
      name: 'db-imports-core-only',
      severity: 'error',
      comment: 'packages/db may import only core. Keep HTTP shapes in contracts and map them in apps/server.',
      from: { path: '^packages/db/' },
      to: { path: '^packages/(?!db/|core/)|^apps/' },
    },
    {
      name: 'bridge-imports-contracts-types-only',
      severity: 'error',
      comment:
        'packages/bridge may import nothing internal but types from contracts (ARCHITECTURE §2): it is the transport-independent core of the host↔sandbox bridge. Pass providers, the forwarder, clocks and metrics in as functions instead of importing them.',
      from: { path: '^packages/bridge/' },
      to: { path: '^packages/(?!bridge/|contracts/)|^apps/' },
    },
    {
      name: 'bridge-contracts-types-only',
      severity: 'error',
      comment:
        'packages/bridge may use contracts for types only (`import type`), so that it carries no schema library at runtime. Check values with the codec in packages/bridge instead.',
      from: { path: '^packages/bridge/' },
      to: { path: '^packages/contracts/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'bridge-no-npm-packages',
      severity: 'error',
      comment:
        'packages/bridge runs on Node built-ins alone (tests may use the dev tools). Implement it in plain TypeScript, or do the work in apps/server and pass a function in.',
      from: { path: '^packages/bridge/', pathNot: '\\.test\\.ts$' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'client-imports-contracts-only',
      severity: 'error',
      comment: 'packages/client may import only contracts. It is the typed HTTP client; domain logic belongs in the server.',
      from: { path: '^packages/client/' },
      to: { path: '^packages/(?!client/|contracts/)|^apps/' },
    },
    {
      name: 'apps-cli-web-use-client-and-contracts',
      severity: 'error',
      comment:
        'apps/cli and apps/web talk to Sandcast only through @sandcast/client and @sandcast/contracts. Add an API route instead of importing server, db, providers or core runtime code.',
      from: { path: '^apps/(cli|web)/' },
      to: { path: ['^packages/(?!client/|contracts/)', '^apps/(?!cli/|web/)'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'concrete-providers-only-in-registry',
      severity: 'error',
      comment:
        'apps/server may import a concrete provider only in its provider registry (apps/server/src/providers/). Everywhere else use the SandboxProvider interface from provider-sdk.',
      from: { path: '^apps/server/src/', pathNot: ['^apps/server/src/providers/', '\\.test\\.ts$'] },
      to: { path: '^packages/providers/' },
    },
    {
      name: 'no-deep-imports',
      severity: 'error',
      comment:
        "Import a Sandcast package through its name (@sandcast/x), not through a relative path into its folder. If you need something the package does not export, export it from its index.ts (or a ./testing subpath for test helpers) and add it to the package's exports.",
      from: { path: '^(packages/providers/[^/]+|packages/[^/]+|apps/[^/]+)/' },
      to: { path: '^(packages|apps)/', pathNot: '^$1/', dependencyTypesNot: ['aliased-workspace'] },
    },
    {
      name: 'no-deep-imports-from-tests-and-bench',
      severity: 'error',
      comment:
        "tests/, bench/ and scripts/ use Sandcast packages as their callers do: through @sandcast/x. Export what you need from the package's index.ts, or from a ./testing subpath for test-only helpers.",
      from: { path: '^(tests|bench|scripts)/' },
      to: { path: '^(packages|apps)/', dependencyTypesNot: ['aliased-workspace'] },
    },
    {
      name: 'no-cli-web-imports',
      severity: 'error',
      comment:
        'apps/cli and apps/web are separate deployables and never import each other. Put what both need in @sandcast/client (HTTP behaviour, formatting of API values) or @sandcast/contracts (shapes, labels).',
      from: { path: '^apps/(cli|web)/' },
      to: { path: '^apps/(cli|web)/', pathNot: '^apps/$1/' },
    },
    {
      name: 'no-unresolvable-imports',
      severity: 'error',
      comment:
        "This import resolves to nothing. Fix the path, add the package to the importing package's package.json, or — for a @sandcast/x subpath — add it to that package's exports.",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-undeclared-dependencies',
      severity: 'error',
      comment:
        "This npm package is not in the nearest package.json. Declare it (exact version) in the package that imports it — each package may use only the vendor packages it declares — or, in tests/ and bench/, in the root package.json's devDependencies.",
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'no-dev-dependencies-at-runtime',
      severity: 'error',
      comment:
        "Runtime code imports a devDependency, which a production install leaves out. Move the package to the importing package's dependencies, or keep the import in tests, testing/ helpers or build config.",
      from: {
        path: '^(packages|apps)/',
        pathNot: [
          '\\.test\\.tsx?$',
          '/test/',
          '/testing/',
          '/test-support/',
          '/src/testing\\.ts$',
          '^apps/web/src/test/',
          '\\.config\\.ts$',
        ],
      },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['npm', 'npm-peer', 'type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};

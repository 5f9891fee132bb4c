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
      comment: 'Import a Sandcast package through its name (@sandcast/x), not through a relative path into its folder.',
      from: { path: '^(packages|apps)/([^/]+)/' },
      to: { path: '^(packages|apps)/', pathNot: '^$1/$2/', dependencyTypesNot: ['aliased-workspace'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules/(?!@sandcast)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};

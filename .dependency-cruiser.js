// The import rules of src/ (docs/architecture.md, "Layers"), checked by `npm run check:imports`.
// A folder may import its own files and the folders below it in LAYERS, never one above: so the
// folders can have no cycle among them, and no-circular catches the cycles inside one folder.
const LAYERS = [
  ['protocol', 'util'],
  ['kernel'],
  ['logging'],
  ['metrics'],
  ['config'],
  ['scheduling'],
  ['backends'],
  ['repository'],
  ['core'],
  ['frontends'],
  ['server.ts', 'perf'],
  ['analyze'],
  ['cli'],
];
const folder = (name) => (name.endsWith('.ts') ? `^src/${name.replace('.', '\\.')}$` : `^src/${name}/`);

const upward = LAYERS.slice(0, -1).flatMap((layer, rank) =>
  layer.map((name) => ({
    name: `layer-${name}`,
    comment: `src/${name} imports only the layers below it`,
    severity: 'error',
    from: { path: folder(name) },
    to: { path: LAYERS.slice(rank + 1).flat().map(folder), pathNot: folder(name) },
  })),
);

export default {
  forbidden: [
    { name: 'no-circular', comment: 'no import cycles anywhere in src/', severity: 'error', from: {}, to: { circular: true } },
    ...upward,
    {
      name: 'client-imports-protocol-only',
      comment: 'nereid/client loads no server code: only src/protocol and itself',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/(client|protocol)/' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: a cycle of types is a cycle of design.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    exclude: { path: ['\\.test\\.ts$', '^src/protocol/gen/'] },
  },
};

// Dependencies between the folders of src/ point one way (issue 16): no folder imports a folder
// that imports it back, directly or through others; type-only imports count. A CommonJS config
// because that is the form dependency-cruiser reads without a build step.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment: 'A folder of src/ must not import a folder that imports it back.',
      scope: 'folder',
      from: { path: '^src/' },
      to: { path: '^src/', circular: true },
    },
    {
      name: 'no-module-cycle',
      severity: 'error',
      comment: 'No module of src/ imports itself back through others.',
      from: { path: '^src/' },
      to: { path: '^src/', circular: true },
    },
    {
      name: 'pages-take-data',
      severity: 'error',
      comment: 'Pages render what the auth wing hands them: they never import Auth.js.',
      from: { path: '^src/pages/' },
      to: { path: '@auth/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.cjs', '.mjs'] },
  },
};

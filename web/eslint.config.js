import globals from "globals";

export default [
  {
    files: ["src/**/*.js", "npm/**/*.js", "extension/**/*.js", "tests/**/*.js", "tests/**/*.mjs", "bench/**/*.mjs"],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: { ...globals.browser, ...globals.worker },
    },
    rules: {
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-undef": "error",
      "prefer-const": "error",
      eqeqeq: "error",
    },
  },
  {
    // Classic scripts (the extension's are content scripts, a background and page scripts).
    files: ["src/advertise.js", "src/isolation.js", "src/chrome/apis.js", "extension/**/*.js"],
    languageOptions: { sourceType: "script" },
  },
  {
    files: ["tests/**", "bench/**"],
    languageOptions: { globals: { ...globals.node } },
  },
];

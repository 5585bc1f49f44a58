/** Test files by the common runners' conventions (`test/`, `*.test.*`, `test_*.py`, `*_test.go`…); see `testFiles.ts`. */
export const CONVENTIONAL_TEST_FILE =
  /(?:^|\/)(?:test|tests|__tests__|spec|specs)\/|[._-](?:test|spec)\.[a-z0-9]+$|(?:^|\/)test_[^/]+\.py$|_test\.(?:py|go)$|(?:^|\/)conftest\.py$/;

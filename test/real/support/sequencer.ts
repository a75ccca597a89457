// The real suite's files share one cluster and build on each other (01-install first, 10-uninstall last):
// they run in the order of their names, never by vitest's cached durations.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export class ByName extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return Promise.resolve([...files].sort((a, b) => a.moduleId.localeCompare(b.moduleId)));
  }
}

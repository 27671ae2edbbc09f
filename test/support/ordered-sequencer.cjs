/**
 * Runs the test files in the order the command line names them (`npx jest --runInBand
 * --testSequencer ./test/support/ordered-sequencer.cjs test/fuzz test/boot`), to check that suites
 * do not depend on which ran first; jest's own order follows past durations.
 */
const Sequencer = require('@jest/test-sequencer').default;

class OrderedSequencer extends Sequencer {
  sort(tests) {
    const patterns = process.argv.slice(2).filter((arg) => !arg.startsWith('-') && !arg.endsWith('.cjs'));
    const rank = (path) => {
      const i = patterns.findIndex((p) => path.includes(p));
      return i === -1 ? patterns.length : i;
    };
    return [...tests].sort((a, b) => rank(a.path) - rank(b.path) || a.path.localeCompare(b.path));
  }
}

module.exports = OrderedSequencer;

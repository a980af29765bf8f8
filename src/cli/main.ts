import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError, type Option } from 'commander';
import { UserError } from '../util/errors.ts';
import { PROJECT_ROOT } from '../util/paths.ts';

type Register = (program: Command) => void;

/**
 * Commands by name, each in its own file under commands/ (which only parses and prints). They are imported
 * lazily: `llmfleet simulate` should not pay for TensorFlow.js or the live plane's HTTP stack at start-up.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  simulate: async () => (await import('./commands/simulate.ts')).registerSimulate,
  compare: async () => (await import('./commands/compare.ts')).registerCompare,
  capacity: async () => (await import('./commands/capacity.ts')).registerCapacity,
  forecast: async () => (await import('./commands/forecast.ts')).registerForecast,
  plan: async () => (await import('./commands/plan.ts')).registerPlan,
  calibrate: async () => (await import('./commands/calibrate.ts')).registerCalibrate,
  emulate: async () => (await import('./commands/emulate.ts')).registerEmulate,
  serve: async () => (await import('./commands/serve.ts')).registerServe,
  replay: async () => (await import('./commands/replay.ts')).registerReplay,
};

/** Builds the `llmfleet` program with the named command, or with every command (for help and unknown names). */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command('llmfleet')
    .description('Simulate, plan and run LLM inference fleets')
    .version((JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version)
    // Parse errors are printed by main, as one line (commanderLine); help still goes to stdout as usual.
    .configureOutput({ outputError: () => {} })
    .exitOverride();
  const names = only !== undefined && Object.hasOwn(COMMANDS, only) ? [only] : Object.keys(COMMANDS);
  for (const name of names) (await COMMANDS[name]!())(program);
  // `rawArgs` (the argv given to parse) is set by commander but not in its type declarations.
  const argvOf = (p: Command) => (p as unknown as { rawArgs: string[] }).rawArgs.slice(2);
  for (const c of program.commands) c.exitOverride().hook('preAction', (_cmd, action) => refuseRepeatedFlags(action.options as readonly Option[], argvOf(program)));
  return program;
}

/**
 * A flag that takes one value, given twice (`--trace a.csv --trace b.csv`, `--seed 1 --seed 2`): commander keeps the
 * last and the run silently ignored the first; it is an error. Repeatable flags (a list default, variadic, or
 * "repeatable" in their help, as every accumulating flag here says) and on/off switches may repeat.
 */
function refuseRepeatedFlags(options: readonly Option[], args: readonly string[]): void {
  const end = args.indexOf('--');
  const tokens = end < 0 ? args : args.slice(0, end);
  for (const o of options) {
    if (!(o.required || o.optional) || o.variadic || Array.isArray(o.defaultValue) || /\brepeatable\b/.test(o.description)) continue;
    const names = [o.long, o.short].filter((n): n is string => n !== undefined);
    const given = tokens.filter((t) => names.some((n) => t === n || t.startsWith(`${n}=`)));
    if (given.length > 1) throw new UserError(`${o.long ?? o.short}: given ${given.length} times; it takes one value (the run would use only the last)`);
  }
}

/** Entry point: user mistakes exit 2 with one line; bugs keep their stack and exit 1. */
export async function main(argv: string[]): Promise<void> {
  // `llmfleet … | head` closes the pipe early: stop quietly instead of crashing on EPIPE.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  try {
    await (await buildProgram(argv[2])).parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version are not errors; help shown for a missing command (on stderr) has been printed already.
      if (e.exitCode === 0) process.exit(0);
      if (e.code !== 'commander.help' && e.code !== 'commander.helpDisplayed') process.stderr.write(`llmfleet: ${commanderLine(e.message)}\n`);
      process.exit(2);
    }
    if (e instanceof UserError) {
      process.stderr.write(`llmfleet: ${e.message}\n`);
      process.exit(2);
    }
    // Writing an output failed (disk full, a folder removed mid-run, a file where a folder should be): the
    // environment, not a bug, so one line too. Outputs are checked up front (prepareOutDir); this is the backstop.
    const fsErr = e as NodeJS.ErrnoException;
    if (typeof fsErr.path === 'string' && ['open', 'mkdir', 'write', 'rename', 'scandir'].includes(fsErr.syscall ?? '')) {
      process.stderr.write(`llmfleet: cannot write ${fsErr.path}: ${fsErr.code ?? fsErr.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

/**
 * A commander parse error as one line: `error: unknown option '--sede'\n(Did you mean --seed?)` becomes
 * `unknown option '--sede' (did you mean --seed?); run with --help for usage`.
 */
export function commanderLine(message: string): string {
  const parts = message.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const text = parts
    .map((l, i) => (i === 0 ? l.replace(/^error:\s*/, '') : l.replace(/^\((\w)/, (_, c: string) => `(${c.toLowerCase()}`)))
    .join(' ')
    .replace(/\.$/, '');
  return `${text}; run with --help for usage`;
}

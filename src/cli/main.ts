import { Command, CommanderError } from 'commander';
import { UserError } from '../util/errors.ts';
import { registerSimulate } from './commands/simulate.ts';
import { registerForecast } from './commands/forecast.ts';
import { registerPlan } from './commands/plan.ts';
import { registerCalibrate } from './commands/calibrate.ts';

/** Builds the `llmfleet` program. Each command lives in its own file under commands/ and only parses and prints. */
export function buildProgram(): Command {
  const program = new Command('llmfleet')
    .description('Simulate, plan and run LLM inference fleets')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerSimulate(program);
  registerForecast(program);
  registerPlan(program);
  registerCalibrate(program);
  for (const c of program.commands) c.exitOverride();
  return program;
}

/** Entry point: user mistakes exit 2 with one line; bugs keep their stack and exit 1. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // commander has already printed its message; help and version are not errors.
      process.exit(e.exitCode === 0 ? 0 : 2);
    }
    if (e instanceof UserError) {
      process.stderr.write(`llmfleet: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

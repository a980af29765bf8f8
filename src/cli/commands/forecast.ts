import type { Command } from 'commander';
import { UserError } from '../../util/errors.ts';

// Placeholder until the forecast command lands; it must not be committed as done.
export function registerForecast(program: Command): void {
  program.command('forecast').description('(in progress)').allowUnknownOption().action(() => {
    throw new UserError('forecast: not implemented yet');
  });
}

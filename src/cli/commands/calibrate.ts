import type { Command } from 'commander';
import { UserError } from '../../util/errors.ts';

// Placeholder until the calibrate command lands; it must not be committed as done.
export function registerCalibrate(program: Command): void {
  program.command('calibrate').description('(in progress)').allowUnknownOption().action(() => {
    throw new UserError('calibrate: not implemented yet');
  });
}

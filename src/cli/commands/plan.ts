import type { Command } from 'commander';
import { UserError } from '../../util/errors.ts';

// Placeholder until the plan command lands; it must not be committed as done.
export function registerPlan(program: Command): void {
  program.command('plan').description('(in progress)').allowUnknownOption().action(() => {
    throw new UserError('plan: not implemented yet');
  });
}

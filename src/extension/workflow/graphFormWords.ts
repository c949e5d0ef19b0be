import * as vscode from 'vscode';
import type { FormWords } from '../../core/graph/formFields';

/** The node form's words, translated. */
export function formWords(): FormWords {
  const t = vscode.l10n.t;
  return {
    notInteger: t('expects an integer'),
    notNumber: t('expects a number'),
    belowMin: t('below the minimum {0}'),
    aboveMax: t('above the maximum {0}'),
    notChoice: t('not one of the choices'),
    notBoolean: t('expects true or false'),
    notText: t('expects text'),
    tooLong: t('longer than {0} characters'),
    inputs: t('Inputs'),
    close: t('Close'),
    randomize: t('Randomize'),
    linkedFrom: t('linked from node {0}'),
    linked: t('linked'),
    inJson: t('edit this value in the JSON'),
    noDefinitions: t('No node definitions: each value is typed by what the file holds (no ranges, no choices).'),
    unknownClass: t('{0} is not among the node definitions: each value is typed by what the file holds.'),
  };
}

/** The result texts the model reads for a call that approval kept from running. */

/** The result text of a call nobody decided on within the approval window. */
export function expiredText(toolName: string): string {
  return denialText(toolName, 'nobody decided on it within the approval window');
}

/** The result text a denied call gets. */
export function denialText(toolName: string, reason: string | undefined): string {
  return reason === undefined || reason === ''
    ? `Tool '${toolName}' was denied: the user did not approve it`
    : `Tool '${toolName}' was denied: ${reason}`;
}

/** The result text of a call that may have run before an interruption and was refused a second run. */
export function unknownOutcomeText(toolName: string, refusal: string): string {
  return `Tool '${toolName}' may have run before the session was interrupted, and it was not run again (${refusal}). Its outcome is unknown: check before relying on it.`;
}

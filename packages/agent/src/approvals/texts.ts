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

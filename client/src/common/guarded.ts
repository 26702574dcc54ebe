/** Wraps a command so that a failure is reported once (a message with "Open Log") instead of thrown at VS Code. */
export function guardedBy(reportError: (error: unknown) => void) {
	return <A extends unknown[]>(body: (...args: A) => Promise<void>) =>
		async (...args: A): Promise<void> => {
			try {
				await body(...args);
			} catch (error) {
				reportError(error);
			}
		};
}

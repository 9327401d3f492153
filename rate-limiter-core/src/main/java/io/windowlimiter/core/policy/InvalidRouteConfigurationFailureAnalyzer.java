package io.windowlimiter.core.policy;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Prints a refused route, plan or override as Boot's "APPLICATION FAILED TO START" block rather than a
 * stack trace: the description says what was found where, the action what is allowed (for an argument that
 * does not exist: the names there are).
 */
class InvalidRouteConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidRouteConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidRouteConfigurationException cause) {
		String owner = cause.getKind() + " '" + cause.getRouteId() + "'";
		// a misspelt name is to be replaced, not set: "Set ...args.windw to algorithm, burst ..." read as the opposite
		String action = cause.isUnknownName()
				? "Replace the unknown argument " + cause.getProperty() + " of " + owner + " with one of: "
						+ cause.getAllowed() + "."
				: "Set " + cause.getProperty() + " of " + owner + " to " + cause.getAllowed() + ".";
		return new FailureAnalysis("The rate limit of " + owner + " is invalid: " + cause.getProperty() + " "
				+ cause.getFound() + ".", action, cause);
	}

}

package io.windowlimiter.core.policy;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Prints a refused route, plan or override as Boot's "APPLICATION FAILED TO START" block rather than a
 * stack trace: the description says what was found where, the action what is allowed.
 */
class InvalidRouteConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<InvalidRouteConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidRouteConfigurationException cause) {
		String owner = cause.getKind() + " '" + cause.getRouteId() + "'";
		return new FailureAnalysis("The rate limit of " + owner + " is invalid: " + cause.getProperty() + " "
				+ cause.getFound() + ".", "Set " + cause.getProperty() + " of " + owner + " to " + cause.getAllowed()
				+ ".", cause);
	}

}

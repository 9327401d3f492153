package io.windowlimiter.core.algorithm;

import io.lettuce.core.protocol.CommandWrapper;
import io.lettuce.core.tracing.LettuceObservationContext;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationPredicate;

/**
 * Leaves the limiter's own scripts out of Lettuce's command observations: where the application observes its Redis
 * commands (Spring Boot does with an {@code ObservationRegistry}), each of them otherwise started and stopped an
 * observation and its timer, about 4 us of the gateway's CPU per decision (the HTTP benchmark's profile, issue 47),
 * a quarter of what the limiter adds to a request. The limiter's own metrics time its decisions
 * ({@code gateway.ratelimit.*}); every other command of the application is observed as before. Registered as an
 * {@link ObservationPredicate} bean, which Spring Boot applies to the registry.
 */
public final class ScriptObservationFilter implements ObservationPredicate {

	@Override
	public boolean test(String name, Observation.Context context) {
		return !(context instanceof LettuceObservationContext lettuce && lettuce.hasCommand()
				&& CommandWrapper.unwrap(lettuce.getRequiredCommand()) instanceof ScriptSender.ScriptCommand);
	}

}

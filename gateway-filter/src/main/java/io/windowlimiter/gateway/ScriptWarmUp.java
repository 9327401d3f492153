package io.windowlimiter.gateway;

import io.windowlimiter.gateway.algorithm.LimitScript;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;

/**
 * Loads the decision script once the application is ready, without waiting for it, so the first
 * requests do not pay for connecting to Redis and loading the script within the decision timeout.
 * If Redis is not there yet, the first requests load it as usual.
 */
public class ScriptWarmUp implements ApplicationListener<ApplicationReadyEvent> {

	private static final Log logger = LogFactory.getLog(ScriptWarmUp.class);

	private final LimitScript script;

	public ScriptWarmUp(LimitScript script) {
		this.script = script;
	}

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		this.script.load()
			.subscribe(sha -> logger.debug("Rate-limit script loaded into Redis as " + sha),
					error -> logger.info("Rate-limit script not loaded at start-up (first requests will): " + error));
	}

}

package io.windowlimiter.gateway;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/** A bare gateway for tests: the library's auto-configuration, routes from the test's properties. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class GatewayTestApplication {

	/**
	 * Properties for a test that expects start-up to fail: Boot's failure report ("APPLICATION FAILED TO
	 * START") and its "Application run failed", both logged at ERROR, stay out of the build's output,
	 * where they read as failures of a passing run. {@code StartupCheckTests.aRefusalPrintsAsBootsFailureAnalysis}
	 * checks the report itself.
	 */
	public static final String[] QUIET_REFUSAL = {
			"logging.level.org.springframework.boot.diagnostics.LoggingFailureAnalysisReporter=off",
			"logging.level.org.springframework.boot.SpringApplication=off" };

}

package io.windowlimiter.gateway;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/** A bare gateway for tests: the library's auto-configuration, routes from the test's properties. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class GatewayTestApplication {

}

/**
 * For operators, beside the decision path: the {@code ratelimits} actuator endpoint, which reads and
 * resets clients' quotas, the broadcast that carries a reset to every instance, and the sketch of the
 * clients refused most.
 */
@NullMarked
package io.windowlimiter.gateway.operations;

import org.jspecify.annotations.NullMarked;

/**
 * For operators, beside the decision path: the {@code ratelimits} actuator endpoint, which reads and
 * resets clients' quotas and assigns their plans and overrides, the broadcast that carries each change to
 * every instance, and the sketch of the clients refused most.
 */
@NullMarked
package io.windowlimiter.core.operations;

import org.jspecify.annotations.NullMarked;

/**
 * The {@code WindowRateLimit} gateway filter: the request's whole life on the core, several per route,
 * costs from the request (a header, a resolver) and from the response (counted statuses, a cost header),
 * reserved at admission and settled once the response is known.
 */
@NullMarked
package io.windowlimiter.gateway.filter;

import org.jspecify.annotations.NullMarked;

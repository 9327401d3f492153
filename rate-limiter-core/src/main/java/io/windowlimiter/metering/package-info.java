/**
 * Reading an LLM call as it passes, with no gateway types: what a request body asks for and a bound of
 * its tokens at admission ({@link io.windowlimiter.metering.LlmRequest},
 * {@link io.windowlimiter.metering.TokenEstimate}), and the usage the upstream reports in its response,
 * scanned chunk by chunk in bounded memory ({@link io.windowlimiter.metering.UsageMeter}).
 */
@NullMarked
package io.windowlimiter.metering;

import org.jspecify.annotations.NullMarked;

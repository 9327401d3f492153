package io.windowlimiter.core;

/**
 * What an LLM call is charged when its response has ended: the tokens its token limits count, the price its
 * money limits count ({@link LlmSettings#charge(io.windowlimiter.metering.UsageMeter, int, boolean, Reservation)}).
 *
 * @param tokens tokens, 0 or more
 * @param microDollars whole micro-dollars, 0 or more; 0 when the call counts no money
 */
public record LlmCharge(long tokens, long microDollars) {
}

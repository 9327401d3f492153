/**
 * Which clients a route never limits or always refuses: allow and deny lists written in configuration
 * (per route and for all routes), and exemptions and blocks made by operators at run time.
 */
@NullMarked
package io.windowlimiter.core.access;

import org.jspecify.annotations.NullMarked;

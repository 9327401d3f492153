package io.windowlimiter.core.key;

/**
 * A key resolver that can say what it reads, so that a request without it can be told what was missing (and the
 * log can say it) without echoing anything the request sent.
 */
public interface KeySource {

	/** What a request must carry to be counted, e.g. {@code the X-API-Key header}; never a value. */
	String keySource();

}

package io.windowlimiter.core.key;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.jspecify.annotations.Nullable;

/**
 * What a client key that is a credential (an API key, a bearer token, a cookie) becomes before anything
 * keeps, prints or counts it: Redis key names, the deny cache, the clients refused most, logs, operators'
 * assignments and the endpoint's answers all see this, never the credential.
 *
 * <p>With a secret ({@code window-rate-limiter.client-key-secret}): {@code hmac:} and the first 18 bytes of
 * HMAC-SHA-256(secret, key) in Base64url, 24 characters, so a copy of Redis or of a log cannot be matched
 * against guessed keys without the secret. Without one: {@code sha256:} and the same of plain SHA-256, which
 * shows nothing in clear but can be checked against guesses. 144 bits: no two clients of this world share
 * one. Every instance must hash alike, so all share the secret. The prefix tells an operator it is a hash;
 * both forms are plain characters, so {@link RedisKeys} keeps them as they are.
 */
public final class ClientKeyHash {

	/** What a key hashed with the secret starts with. */
	public static final String KEYED = "hmac:";

	/** What a key hashed without a secret starts with. */
	public static final String UNKEYED = "sha256:";

	/** The shortest secret taken: a short one could be guessed along with the keys. */
	public static final int MIN_SECRET_LENGTH = 16;

	private static final int BYTES = 18;

	/** Base64 of {@value #BYTES} bytes: no padding, no partial character. */
	private static final int ENCODED_LENGTH = BYTES / 3 * 4;

	private static final String HMAC = "HmacSHA256";

	private final @Nullable Mac keyed;

	private final String prefix;

	/**
	 * @param secret the shared secret, at least {@value #MIN_SECRET_LENGTH} characters; null hashes without one
	 * @throws IllegalArgumentException for a blank or shorter secret
	 */
	public ClientKeyHash(@Nullable String secret) {
		if (secret == null) {
			this.keyed = null;
			this.prefix = UNKEYED;
			return;
		}
		if (secret.strip().length() < MIN_SECRET_LENGTH) {
			throw new IllegalArgumentException("is " + (secret.isBlank() ? "blank" : secret.length() + " characters long"));
		}
		try {
			Mac mac = Mac.getInstance(HMAC);
			mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), HMAC));
			this.keyed = mac;
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("Every JVM has " + HMAC, ex);
		}
		this.prefix = KEYED;
	}

	/** Whether a secret keys the hash. */
	public boolean keyed() {
		return this.keyed != null;
	}

	/** The key's hash, e.g. {@code hmac:q0Nw3z3Jd5b8M-0j2eVZ6Q1X}. */
	public String of(String key) {
		byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
		Mac keyed = this.keyed;
		byte[] digest = (keyed != null) ? copy(keyed).doFinal(bytes) : sha256(bytes);
		return this.prefix + Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, BYTES));
	}

	/** Whether the text has the form of this instance's hashes (as an operator copies one from the endpoint). */
	public boolean isHash(String key) {
		if (key.length() != this.prefix.length() + ENCODED_LENGTH || !key.startsWith(this.prefix)) {
			return false;
		}
		for (int i = this.prefix.length(); i < key.length(); i++) {
			char c = key.charAt(i);
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
				return false;
			}
		}
		return true;
	}

	/** A Mac of its own per call: a Mac is not thread-safe, and a clone of the initialised one is cheap. */
	private static Mac copy(Mac keyed) {
		try {
			return (Mac) keyed.clone();
		}
		catch (CloneNotSupportedException ex) {
			throw new IllegalStateException(HMAC + " of this JVM cannot be cloned", ex);
		}
	}

	private static byte[] sha256(byte[] bytes) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(bytes);
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("Every JVM has SHA-256", ex);
		}
	}

}

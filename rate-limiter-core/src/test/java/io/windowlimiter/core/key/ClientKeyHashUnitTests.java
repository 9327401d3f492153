package io.windowlimiter.core.key;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClientKeyHashUnitTests {

	private static final String SECRET = "0123456789abcdef0123456789abcdef";

	private static final String KEY = "sk-proj-4f9a2b7c1d8e3f6a0b5c9d2e7f1a4b8c";

	@Test
	void theSameSecretGivesTheSameHashOnEveryInstance() {
		// two instances: two objects made from the same property
		ClientKeyHash one = new ClientKeyHash(SECRET);
		ClientKeyHash other = new ClientKeyHash(new String(SECRET.toCharArray()));
		assertThat(one.of(KEY)).isEqualTo(other.of(KEY)).isEqualTo(one.of(KEY));
		assertThat(one.of(KEY)).as("another key").isNotEqualTo(one.of(KEY + "x"));
	}

	@Test
	void anotherSecretGivesAnotherHashAndNoSecretAPlainSha256() {
		String keyed = new ClientKeyHash(SECRET).of(KEY);
		assertThat(new ClientKeyHash("fedcba9876543210fedcba9876543210").of(KEY)).isNotEqualTo(keyed);
		String unkeyed = new ClientKeyHash(null).of(KEY);
		assertThat(unkeyed).startsWith(ClientKeyHash.UNKEYED).isNotEqualTo(keyed);
		assertThat(new ClientKeyHash(null).of(KEY)).isEqualTo(unkeyed);
	}

	@Test
	void aHashIsShortPlainPrefixedAndHidesTheKey() {
		ClientKeyHash hash = new ClientKeyHash(SECRET);
		String hashed = hash.of(KEY);
		assertThat(hashed).startsWith("hmac:").hasSize("hmac:".length() + 24).doesNotContain(KEY)
			.matches("hmac:[A-Za-z0-9_-]{24}");
		// HMAC-SHA-256("0123...", KEY), first 18 bytes in Base64url, as any HMAC implementation computes it
		assertThat(hashed).isEqualTo("hmac:" + java.util.Base64.getUrlEncoder().withoutPadding()
			.encodeToString(java.util.Arrays.copyOf(hmac(SECRET, KEY), 18)));
		// plain characters: RedisKeys keeps it as it is in the hash tag
		assertThat(RedisKeys.of("r", hashed, "sw")).isEqualTo("wrl:{" + hashed + "}:r:sw");
		assertThat(hash.isHash(hashed)).isTrue();
		assertThat(hash.isHash(KEY)).isFalse();
		assertThat(hash.isHash(new ClientKeyHash(null).of(KEY))).as("the other form").isFalse();
		assertThat(hash.isHash("hmac:" + "!".repeat(24))).isFalse();
	}

	@Test
	void aShortOrBlankSecretIsRefused() {
		assertThatThrownBy(() -> new ClientKeyHash("short")).hasMessage("is 5 characters long");
		assertThatThrownBy(() -> new ClientKeyHash("   ")).hasMessage("is blank");
	}

	private static byte[] hmac(String secret, String key) {
		try {
			javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
			mac.init(new javax.crypto.spec.SecretKeySpec(secret.getBytes(java.nio.charset.StandardCharsets.UTF_8),
					"HmacSHA256"));
			return mac.doFinal(key.getBytes(java.nio.charset.StandardCharsets.UTF_8));
		}
		catch (java.security.GeneralSecurityException ex) {
			throw new IllegalStateException(ex);
		}
	}

}

package io.windowlimiter.core.key;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedisKeysUnitTests {

	private static final List<String> HOSTILE = List.of("x".repeat(8 * 1024), "ключ-日本-🔑", "{alice}", "a}b{c",
			"evil\r\nSET x y", "with space", "100%25off", "\u0000\u0001\u00ff binary", "", "a:b", "#notahash",
			"}{", "{{}}", "tab\there");

	@Test
	void plainKeysStayReadable() {
		assertThat(RedisKeys.of("orders", "alice", "fw")).isEqualTo("wrl:{alice}:orders:fw");
		assertThat(RedisKeys.of("orders", "2001:db8::1", "log")).isEqualTo("wrl:{2001:db8::1}:orders:log");
		assertThat(RedisKeys.ofScope("api", "alice", "fw1")).isEqualTo("wrl:{alice}:scope:api:fw1");
	}

	@Test
	void hostileKeysKeepOneIntactHashTagAndStaySmall() {
		for (String client : HOSTILE) {
			String key = RedisKeys.of("orders", client, "swc");
			assertThat(key.getBytes(StandardCharsets.UTF_8).length).as(client).isLessThanOrEqualTo(200);
			assertThat(key).startsWith("wrl:{").endsWith("}:orders:swc");
			assertThat(key.chars().filter(c -> c == '{').count()).as(client).isEqualTo(1);
			assertThat(key.chars().filter(c -> c == '}').count()).as(client).isEqualTo(1);
			assertThat(key).as(client).doesNotContain("\r", "\n", " ", "\u0000");
		}
	}

	@Test
	void distinctClientKeysNeverShareAKey() {
		Set<String> keys = new HashSet<>();
		for (String client : HOSTILE) {
			keys.add(RedisKeys.of("orders", client, "fw"));
		}
		// a hashed key cannot be forged by sending its hashed form as a plain key
		String hashed = RedisKeys.of("orders", "{alice}", "fw");
		String tag = hashed.substring(hashed.indexOf('{') + 1, hashed.indexOf('}'));
		keys.add(RedisKeys.of("orders", tag, "fw"));
		assertThat(keys).hasSize(HOSTILE.size() + 1);
	}

	@Test
	void routesNeverShareAKeyEvenWhenTheirIdsLookAlike() {
		assertThat(RedisKeys.of("a:b", "c", "fw")).isNotEqualTo(RedisKeys.of("a", "b:c", "fw"));
		assertThat(RedisKeys.of("orders", "alice", "fw")).isNotEqualTo(RedisKeys.of("payments", "alice", "fw"));
		// a route named "scope" and a scope: one part after the route id, two after "scope"
		assertThat(RedisKeys.of("scope", "alice", "fw")).isNotEqualTo(RedisKeys.ofScope("fw", "alice", "fw"));
		assertThat(RedisKeys.ofScope("a:b", "c", "fw")).isNotEqualTo(RedisKeys.ofScope("a", "c", "b:fw"));
	}

	@Test
	void aClientsRouteAndScopeKeysShareOneHashTag() {
		for (String client : HOSTILE) {
			String route = RedisKeys.of("orders", client, "fw");
			String scope = RedisKeys.ofScope("api", client, "fw");
			assertThat(scope.substring(0, scope.indexOf('}') + 1)).as(client)
				.isEqualTo(route.substring(0, route.indexOf('}') + 1));
		}
	}

	@Test
	void longPlainKeysAreHashedToo() {
		String atLimit = "k".repeat(RedisKeys.MAX_PLAIN_LENGTH);
		assertThat(RedisKeys.of("r", atLimit, "fw")).contains(atLimit);
		assertThat(RedisKeys.of("r", atLimit + "k", "fw")).doesNotContain(atLimit).contains("#");
	}

}

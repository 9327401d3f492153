package io.windowlimiter.metering;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static io.windowlimiter.metering.LlmPayloads.utf8;
import static org.assertj.core.api.Assertions.assertThat;

class JsonScannerUnitTests {

	@Test
	void reportsEachValueWithItsPathKindAndOffsets() {
		String json = " {\"a\": {\"b\": [1, \"x\\\"}\", true, null, {\"c\": -2.5e3}]}, \"d\": false, \"é\": \"ü\"} ";
		List<String> seen = scan(json);
		assertThat(seen).containsExactly("OBJECT@0 [1,2)", "OBJECT@1 a [7,8)", "ARRAY@2 a.b [13,14)",
				"NUMBER@3 a.b.[] [14,15)=1", "STRING@3 a.b.[] [17,23)", "TRUE@3 a.b.[] [25,29)",
				"NULL@3 a.b.[] [31,35)", "OBJECT@3 a.b.[] [37,38)", "NUMBER@4 a.b.[].c [43,49)=-1",
				"end OBJECT@3 size 1", "end ARRAY@2 size 5", "end OBJECT@1 size 1", "FALSE@1 d [59,64)",
				"STRING@1 - [72,76)", "end OBJECT@0 size 3");
		assertThat(new String(utf8(json), 17, 6, java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("\"x\\\"}\"");
	}

	@Test
	void everySliceOfADocumentReportsTheSame() {
		String json = LlmPayloads.RESPONSES_JSON + "  ";
		byte[] bytes = utf8(json);
		List<String> whole = scan(json);
		for (int split = 0; split <= bytes.length; split++) {
			List<String> seen = new ArrayList<>();
			JsonScanner scanner = new JsonScanner(recorder(seen));
			scanner.feed(bytes, 0, split);
			scanner.feed(bytes, split, bytes.length - split);
			scanner.finish();
			assertThat(seen).isEqualTo(whole);
			assertThat(scanner.complete()).isTrue();
		}
	}

	@Test
	void aTopLevelNumberEndsOnlyWithTheDocument() {
		List<String> seen = new ArrayList<>();
		JsonScanner scanner = new JsonScanner(recorder(seen));
		scanner.feed(utf8("12"), 0, 2);
		assertThat(seen).isEmpty();
		scanner.feed(utf8("34"), 0, 2);
		scanner.finish();
		assertThat(seen).containsExactly("NUMBER@0 [0,4)=1234");
		assertThat(scanner.complete()).isTrue();
	}

	@Test
	void numbersOtherThanSmallNaturalOnesHaveNoValue() {
		assertThat(scan("[0, 18446744073709551616, 123456789012345678, -1, 1.0, 1e2, 1234567890123456789012345678]"))
			.filteredOn((line) -> line.startsWith("NUMBER"))
			.extracting((line) -> line.substring(line.indexOf('=') + 1))
			.containsExactly("0", "-1", "123456789012345678", "-1", "-1", "-1", "-1");
	}

	@Test
	void malformedDocumentsFailAndReportNothingMore() {
		for (String bad : new String[] { "[DONE]", "{\"a\" 1}", "{\"a\":1,}x", "{a:1}", "{\"a\":tru}", "[1 2]",
				"{\"a\":1}}", "{\"a\":1} x", "{\"a\":[}", "\"x\" \"y\"", "{\"a\":01x}", "{\"a\"::1}" }) {
			List<String> seen = new ArrayList<>();
			JsonScanner scanner = new JsonScanner(recorder(seen));
			byte[] bytes = utf8(bad);
			scanner.feed(bytes, 0, bytes.length);
			scanner.finish();
			assertThat(scanner.failed() || !scanner.complete()).as(bad).isTrue();
			assertThat(scanner.complete()).as(bad).isFalse();
		}
	}

	@Test
	void nestingDeeperThanTheLimitFails() {
		String deep = "[".repeat(JsonScanner.MAX_DEPTH) + "]".repeat(JsonScanner.MAX_DEPTH);
		JsonScanner scanner = new JsonScanner((s, d, k, start, end) -> {
		});
		scanner.feed(utf8(deep), 0, deep.length());
		assertThat(scanner.complete()).isTrue();
		String deeper = "[" + deep + "]";
		scanner.reset();
		scanner.feed(utf8(deeper), 0, deeper.length());
		assertThat(scanner.failed()).isTrue();
	}

	@Test
	void longKeysAndDeepKeysMatchNothing() {
		List<Boolean> matches = new ArrayList<>();
		JsonScanner scanner = new JsonScanner((s, depth, kind, start, end) -> {
			if (kind == JsonScanner.Kind.NUMBER) {
				matches.add(s.levelIs(depth, "k"));
			}
		});
		String json = "{\"" + "k".repeat(JsonScanner.MAX_KEY + 1) + "\":1,\"k\":2,"
				// k one level below the keyed ones
				+ "\"a\":" + "{\"b\":".repeat(JsonScanner.KEYED_DEPTH - 1) + "{\"k\":3}"
				+ "}".repeat(JsonScanner.KEYED_DEPTH - 1) + "}";
		scanner.feed(utf8(json), 0, json.length());
		assertThat(matches).containsExactly(false, true, false);
	}

	private static List<String> scan(String json) {
		List<String> seen = new ArrayList<>();
		JsonScanner scanner = new JsonScanner(recorder(seen));
		byte[] bytes = utf8(json);
		scanner.feed(bytes, 0, bytes.length);
		scanner.finish();
		assertThat(scanner.complete()).as(json).isTrue();
		return seen;
	}

	private static JsonScanner.Listener recorder(List<String> seen) {
		return new JsonScanner.Listener() {

			@Override
			public void value(JsonScanner scanner, int depth, JsonScanner.Kind kind, long start, long end) {
				String number = kind == JsonScanner.Kind.NUMBER ? "=" + scanner.number() : "";
				seen.add(kind + "@" + depth + path(scanner, depth) + " [" + start + "," + end + ")" + number);
			}

			@Override
			public void containerEnd(JsonScanner scanner, int depth, JsonScanner.Kind kind, int size, long end) {
				seen.add("end " + kind + "@" + depth + " size " + size);
			}

		};
	}

	private static String path(JsonScanner scanner, int depth) {
		StringBuilder path = new StringBuilder();
		for (int level = 1; level <= depth; level++) {
			String name = "-";
			for (String candidate : new String[] { "[]", "a", "b", "c", "d" }) {
				if (scanner.levelIs(level, candidate)) {
					name = candidate;
				}
			}
			path.append(level == 1 ? " " : ".").append(name);
		}
		return path.toString();
	}

}

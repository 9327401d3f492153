package io.windowlimiter.metering;

import java.nio.charset.StandardCharsets;
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

	/** Keys are kept as JSON decodes them, so an escaped spelling of a field is that field. */
	@Test
	void keysAreDecodedAsJsonDecodesThem() {
		assertThat(keys("{\"str\\u0065am\":1}")).containsExactly("stream");
		assertThat(keys("{\"\\u0073\\u0074\\u0072\\u0065\\u0061\\u006D\\u005f\\u006f\\u0070\\u0074\\u0069\\u006f\\u006e\\u0073\":1}"))
			.as("a key longer than MAX_KEY written, shorter decoded").containsExactly("stream_options");
		assertThat(keys("{\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\":1}")).containsExactly("a\"b\\c/d\b\f\n\r\t");
		assertThat(keys("{\"\\u00e9\\u00E9\":1,\"\\u20ac\":2}")).containsExactly("éé", "€");
		// a surrogate pair is one character, its four bytes: the same key as written raw
		assertThat(keys("{\"\\ud83d\\ude42\":1,\"🙂\":2,\"x\\uD83D\\uDE42y\":3}")).containsExactly("🙂", "🙂", "x🙂y");
		// a lone surrogate is kept as its three bytes, whatever follows it
		String loneHigh = new String(new byte[] { (byte) 0xED, (byte) 0xA0, (byte) 0x80 }, StandardCharsets.UTF_8);
		String loneLow = new String(new byte[] { (byte) 0xED, (byte) 0xB0, (byte) 0x80 }, StandardCharsets.UTF_8);
		assertThat(keys("{\"\\ud800A\":1,\"\\ud800\\u0041\":2,\"\\ud800\\n\":3,\"\\ud800\":4,\"\\udc00x\":5}"))
			.containsExactly(loneHigh + "A", loneHigh + "A", loneHigh + "\n", loneHigh, loneLow + "x");
		assertThat(keys("{\"\\ud800\\ud83d\\ude42\":1}")).containsExactly(loneHigh + "🙂");
	}

	@Test
	void everySliceOfEscapedKeysReportsTheSame() {
		String json = "{\"str\\u0065am\":true,\"\\ud83d\\ude42\\\"\":{\"inc\\u006cude_usage\":1},\"plain\":2}";
		byte[] bytes = utf8(json);
		List<String> whole = keys(json);
		assertThat(whole).containsExactly("stream", "🙂\"", "include_usage", "plain");
		for (int split = 0; split <= bytes.length; split++) {
			for (int second = split; second <= bytes.length; second++) {
				List<String> seen = new ArrayList<>();
				JsonScanner scanner = new JsonScanner(keyRecorder(seen));
				scanner.feed(bytes, 0, split);
				scanner.feed(bytes, split, second - split);
				scanner.feed(bytes, second, bytes.length - second);
				scanner.finish();
				assertThat(seen).as("split at %d and %d", split, second).isEqualTo(whole);
				assertThat(scanner.complete()).isTrue();
			}
		}
	}

	@Test
	void anEscapeJsonDoesNotAllowInAKeyFailsTheDocument() {
		for (String bad : new String[] { "{\"a\\x\":1}", "{\"a\\u12\":1}", "{\"a\\u12g4\":1}", "{\"a\\'\":1}",
				"{\"\\U0041\":1}" }) {
			JsonScanner scanner = new JsonScanner((s, d, k, start, end) -> {
			});
			scanner.feed(utf8(bad), 0, utf8(bad).length);
			scanner.finish();
			assertThat(scanner.complete()).as(bad).isFalse();
		}
	}

	/** Go's encoding/json takes a key for a field whatever its case, with a few Unicode folds of its own. */
	@Test
	void aKeyFoldsToAFieldAsGoMatchesFieldNames() {
		String[] folding = { "stream", "Stream", "STREAM", "\\u017ftream", "ſtream", "max_to\\u212aens", "max_toKens",
				"\\u0130nput", "\\u0131nput", "ınput", "İNPUT" };
		for (String key : folding) {
			String json = "{\"" + key + "\":1}";
			assertThat(folds(json, key.contains("nput") || key.contains("NPUT") ? "input"
					: key.contains("max") ? "max_tokens" : "stream")).as(key).isTrue();
		}
		for (String key : new String[] { "streams", "strea", "s tream", "stréam", "\\u00dftream", "stream\\u0000" }) {
			assertThat(folds("{\"" + key + "\":1}", "stream")).as(key).isFalse();
		}
	}

	@Test
	void wholeNumbersAreReadAsCountsAndOthersAreToldApart() {
		List<Long> counts = new ArrayList<>();
		JsonScanner scanner = new JsonScanner((s, depth, kind, start, end) -> {
			if (kind == JsonScanner.Kind.NUMBER) {
				counts.add(s.wholeNumber());
			}
		});
		String json = "[0, 1000, -0, -1, -99999999999999999999999, 1e3, 1000.0, 1E+3, 99999999999999999999999, "
				+ "9223372036854775807, 9223372036854775808, 1234567890123456789012345678, "
				+ "12345678901234567890123456.5, 123456789012345678901234e5, -]";
		scanner.feed(utf8(json), 0, utf8(json).length);
		scanner.finish();
		assertThat(counts).containsExactly(0L, 1000L, 0L, JsonScanner.NEGATIVE, JsonScanner.NEGATIVE,
				JsonScanner.NOT_WHOLE, JsonScanner.NOT_WHOLE, JsonScanner.NOT_WHOLE, Long.MAX_VALUE, Long.MAX_VALUE,
				Long.MAX_VALUE, Long.MAX_VALUE, JsonScanner.NOT_WHOLE, JsonScanner.NOT_WHOLE, JsonScanner.NOT_WHOLE);
	}

	private static boolean folds(String json, String name) {
		List<Boolean> folds = new ArrayList<>();
		JsonScanner scanner = new JsonScanner((s, depth, kind, start, end) -> {
			if (depth == 1) {
				folds.add(s.levelFolds(1, name));
			}
		});
		scanner.feed(utf8(json), 0, utf8(json).length);
		scanner.finish();
		assertThat(scanner.complete()).as(json).isTrue();
		return folds.get(0);
	}

	/** The keys of each value, as kept, in order. */
	private static List<String> keys(String json) {
		List<String> seen = new ArrayList<>();
		JsonScanner scanner = new JsonScanner(keyRecorder(seen));
		byte[] bytes = utf8(json);
		scanner.feed(bytes, 0, bytes.length);
		scanner.finish();
		assertThat(scanner.complete()).as(json).isTrue();
		return seen;
	}

	private static JsonScanner.Listener keyRecorder(List<String> seen) {
		return (scanner, depth, kind, start, end) -> {
			if (depth > 0) {
				seen.add(scanner.levelKey(depth));
			}
		};
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

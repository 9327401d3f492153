package io.windowlimiter.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.windowlimiter.gateway.test.RedisTestServer;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.yaml.snakeyaml.Yaml;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every YAML snippet in the README and in {@code docs/*.md} starts a gateway, as the files in
 * {@code config/} do in {@link ExampleConfigTests}: a reader who copies one gets a gateway that starts.
 *
 * <p>The convention, for whoever writes a page:
 * <ul>
 * <li>Only blocks fenced {@code ```yaml} are checked; {@code ```yml}, {@code ```sh}, {@code ```json},
 * {@code ```} are not (use them for output and for what is not configuration).</li>
 * <li>A block is a whole configuration by default: it is started as the gateway's configuration, with
 * this test's Redis and free ports given on the command line (so they win over what the snippet says).
 * Every route id it declares must be among the gateway's routes.</li>
 * <li>A block that is a YAML list of routes (items with an {@code id}) is started as the WebFlux routes;
 * a list of filters (items with a {@code name}) as the filters of route {@code docs}. Anything else that
 * is not a map fails: mark it.</li>
 * <li>{@code <!-- docs-test: filter-args -->} on the line before the block: the block is the {@code args}
 * of one {@code RequestRateLimiter} filter (e.g. {@code window-rate-limiter.limits[0].limit: 10}). It is
 * started as the only filter of route {@code docs}, with {@code rate-limiter} and {@code key-resolver}
 * set to this limiter and {@code headerKeyResolver} unless the block sets them.</li>
 * <li>{@code <!-- docs-test: fragment -->} on the line before the block: a part of a larger example that
 * cannot start alone; it must still be YAML. Say in the text what it is a part of.</li>
 * <li>A block that mentions {@code webmvc}, or is marked {@code <!-- docs-test: mvc -->}, is for a Server
 * MVC gateway, which this module's class path does not have: here it is only parsed as YAML.</li>
 * <li>Answers are marked too, for the test that gets them: {@code <!-- docs-test: answer <id> -->} before a
 * {@code ```json} block, {@code <!-- docs-test: answers -->} before a {@code ```sh} block of {@code curl} requests
 * each followed by its answer, with {@code varying: <fields>} for values that differ from run to run
 * ({@code DocsSamples} in test-support reads them and compares shapes). Every {@code ```json} block must be so
 * marked, and its page and id named by a test ({@link #everyJsonAnswerIsMarkedAndNamedByATest}).</li>
 * <li>{@code <!-- docs-test: startup-messages -->} before a {@code ```text} block: start-up messages a test prints
 * and compares (docs/server-mvc.md, {@code MvcStartupMessagesDocsTests}).</li>
 * </ul>
 */
class DocsYamlSnippetTests {

	private static final Pattern BLOCK = Pattern.compile("(?m)^(?:(<!-- docs-test: ([a-z-]+)[^>]*-->)\\s*\\n)?```yaml[ \\t]*\\n(.*?)^```",
			Pattern.DOTALL);

	private static final Path ROOT = Path.of("..");

	record Snippet(String file, int line, String kind, String yaml) {

		@Override
		public String toString() {
			return this.file + ":" + this.line + (this.kind.isEmpty() ? "" : " (" + this.kind + ")");
		}

	}

	@TestFactory
	Stream<DynamicTest> everyYamlSnippetStarts() {
		return snippets().stream().map(snippet -> DynamicTest.dynamicTest(snippet.toString(), () -> {
			try {
				check(snippet);
			}
			catch (Throwable ex) {
				// surefire names a dynamic test by its index: say which page and line
				throw new AssertionError("The snippet at " + snippet + " did not start: " + ex.getMessage(), ex);
			}
		}));
	}

	/** The convention holds: the pages are found, and the marks are ones this test knows. */
	@Test
	void thePagesHaveSnippetsAndOnlyKnownMarks() {
		List<Snippet> snippets = snippets();
		assertThat(snippets).extracting(Snippet::file).contains("README.md", "docs/configuration.md");
		assertThat(snippets).extracting(Snippet::kind).allMatch(kind -> List.of("", "filter-args", "fragment", "mvc").contains(kind));
	}

	/**
	 * Every {@code ```json} block of the pages is an answer a test compares with what a gateway answers: marked
	 * {@code <!-- docs-test: answer <id> -->}, and some test of the repository names its page and id (as
	 * {@code DocsSamples.answer("docs/configuration.md", "quota-exceeded")}); every {@code answers} block a test
	 * reads by its page ({@code DocsSamples.exchanges("docs/operating.md")}).
	 */
	@Test
	void everyJsonAnswerIsMarkedAndNamedByATest() throws IOException {
		StringBuilder tests = new StringBuilder();
		try (Stream<Path> modules = Files.list(ROOT)) {
			// the tests, and the filter contract both adapters' tests run (test-support's main code)
			List<Path> trees = Stream.concat(modules.map(module -> module.resolve("src/test/java")),
					Stream.of(ROOT.resolve("test-support/src/main/java"))).filter(Files::isDirectory).toList();
			for (Path tree : trees) {
				try (Stream<Path> files = Files.walk(tree)) {
					files.filter(file -> file.toString().endsWith(".java")).forEach(file -> tests.append(read(file)));
				}
			}
		}
		Pattern json = Pattern.compile("(?m)^(?:[ \\t]*<!-- docs-test: (answers?)(?: ([\\w-]+))?[^>]*-->\\s*\\n)?[ \\t]*```(json|sh)[ \\t]*\\n");
		int answers = 0;
		for (Path page : pages()) {
			String name = ROOT.relativize(page).toString();
			Matcher block = json.matcher(read(page));
			while (block.find()) {
				int line = (int) read(page).substring(0, block.start()).chars().filter(c -> c == '\n').count() + 1;
				if (block.group(3).equals("json")) {
					assertThat(block.group(1)).as("%s:%d: a ```json block marked <!-- docs-test: answer <id> -->", name, line)
						.isEqualTo("answer");
					assertThat(tests).as("%s:%d: a test naming answer %s", name, line, block.group(2))
						.contains("\"" + name + "\", \"" + block.group(2) + "\"");
					answers++;
				}
				else if ("answers".equals(block.group(1))) {
					assertThat(tests).as("%s:%d: a test reading its answers", name, line)
						.contains("exchanges(\"" + name + "\")", "\"" + name + "\"");
					answers++;
				}
			}
		}
		assertThat(answers).isGreaterThanOrEqualTo(8);
	}

	@Test
	void listsOfRoutesAndOfFiltersAreWrappedAndAnythingElseThatIsNoMapFails() {
		Snippet routes = new Snippet("page.md", 1, "", "- id: a\n  uri: http://a:8080\n");
		assertThat(routeIds(new Yaml().load(configuration(routes, new Yaml().load(routes.yaml()))))).containsExactly("a");
		Snippet filters = new Snippet("page.md", 1, "", "- name: RequestRateLimiter\n  args: { key-resolver: x }\n");
		assertThat(routeIds(new Yaml().load(configuration(filters, new Yaml().load(filters.yaml()))))).containsExactly("docs");
		Snippet args = new Snippet("page.md", 1, "filter-args", "window-rate-limiter.limit: 5\n");
		assertThat(configuration(args, new Yaml().load(args.yaml()))).contains("window-rate-limiter.limit: 5")
			.contains("#{@windowRateLimiter}");
		Snippet text = new Snippet("page.md", 1, "", "just words\n");
		assertThatThrownBy(() -> configuration(text, new Yaml().load(text.yaml()))).isInstanceOf(AssertionError.class)
			.hasMessageContaining("page.md:1");
	}

	static List<Path> pages() {
		List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
		try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
			docs.filter(path -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return pages;
	}

	static List<Snippet> snippets() {
		List<Snippet> snippets = new ArrayList<>();
		for (Path page : pages()) {
			String text = read(page);
			Matcher block = BLOCK.matcher(text);
			while (block.find()) {
				int line = (int) text.substring(0, block.start(3)).chars().filter(c -> c == '\n').count() + 1;
				String kind = (block.group(2) != null) ? block.group(2) : "";
				snippets.add(new Snippet(ROOT.relativize(page).toString(), line, kind, block.group(3)));
			}
		}
		return snippets;
	}

	private static void check(Snippet snippet) throws IOException {
		Object parsed = new Yaml().load(snippet.yaml());
		assertThat(parsed).as("%s is YAML", snippet).isNotNull();
		if (snippet.kind().equals("fragment") || snippet.kind().equals("mvc") || snippet.yaml().contains("webmvc")) {
			return;
		}
		String yaml = configuration(snippet, parsed);
		Path dir = Files.createTempDirectory("docs-snippet");
		Path file = dir.resolve("snippet.yml");
		Files.writeString(file, yaml);
		RedisTestServer redis = RedisTestServer.get();
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port()));
		if (yaml.contains("management")) {
			args.add("--management.server.port=0");
		}
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(GatewayTestApplication.class)
			.properties("spring.config.additional-location=file:" + file)
			.run(args.toArray(String[]::new))) {
			List<String> routes = context.getBean(RouteLocator.class).getRoutes().map(Route::getId).collectList().block();
			assertThat(routes).as("the routes of %s", snippet).containsAll(routeIds(new Yaml().load(yaml)));
		}
		finally {
			Files.deleteIfExists(file);
			Files.deleteIfExists(dir);
		}
	}

	/** The snippet as a gateway's configuration: as it is, or wrapped by the conventions above. */
	@SuppressWarnings("unchecked")
	static String configuration(Snippet snippet, Object parsed) {
		if (snippet.kind().equals("filter-args")) {
			Map<String, Object> args = new LinkedHashMap<>();
			args.put("rate-limiter", "#{@windowRateLimiter}");
			args.put("key-resolver", "#{@headerKeyResolver}");
			args.putAll((Map<String, Object>) parsed);
			return routes(List.of(route(List.of(Map.of("name", "RequestRateLimiter", "args", args)))));
		}
		if (parsed instanceof List<?> items && !items.isEmpty() && items.stream().allMatch(Map.class::isInstance)) {
			if (items.stream().allMatch(item -> ((Map<?, ?>) item).containsKey("id"))) {
				return routes(items);
			}
			if (items.stream().allMatch(item -> ((Map<?, ?>) item).containsKey("name"))) {
				return routes(List.of(route(items)));
			}
		}
		assertThat(parsed).as("%s is a configuration (a map), a list of routes or of filters; else mark it", snippet)
			.isInstanceOf(Map.class);
		return snippet.yaml();
	}

	private static Map<String, Object> route(List<?> filters) {
		Map<String, Object> route = new LinkedHashMap<>();
		route.put("id", "docs");
		route.put("uri", "http://127.0.0.1:9");
		route.put("predicates", List.of("Path=/docs/**"));
		route.put("filters", filters);
		return route;
	}

	private static String routes(List<?> routes) {
		return new Yaml().dump(Map.of("spring.cloud.gateway.server.webflux.routes", routes));
	}

	/** Route ids under the WebFlux routes, whether the snippet nests its keys or dots them. */
	@SuppressWarnings("unchecked")
	static List<String> routeIds(Object yaml) {
		List<String> ids = new ArrayList<>();
		if (yaml instanceof Map<?, ?> map) {
			for (Map.Entry<?, ?> entry : map.entrySet()) {
				String key = String.valueOf(entry.getKey());
				if (key.endsWith("webflux.routes") || key.equals("routes")) {
					if (entry.getValue() instanceof List<?> routes) {
						routes.stream()
							.filter(Map.class::isInstance)
							.map(route -> ((Map<String, Object>) route).get("id"))
							.filter(id -> id != null)
							.forEach(id -> ids.add(String.valueOf(id)));
					}
				}
				else {
					ids.addAll(routeIds(entry.getValue()));
				}
			}
		}
		return ids;
	}

	static String read(Path page) {
		try {
			return Files.readString(page);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}

package io.windowlimiter.mvc;

import java.io.IOException;
import java.nio.ByteBuffer;

import io.windowlimiter.metering.UsageMeter;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The response of an LLM call as it passes to the client on Server MVC: the proxy's own response, written by
 * it, onto the servlet response whose output stream hands each write to the {@link UsageMeter} and writes
 * what the meter passes on at once (never gathered), and passes each flush on, so a stream reaches the client
 * as the upstream sends it (the proxy flushes each read of a streaming type, {@code text/event-stream}
 * among them). The body's {@code Content-Length} is always dropped (Tomcat then sends it chunked): when
 * the meter strips OpenAI's usage-only chunk the body gets shorter, and with a length the client has the
 * whole answer as soon as its last byte is written (Tomcat flushes at the length), before the settle below;
 * chunked, the answer ends with the last chunk, sent when this request's thread is done, after the settle,
 * so the client's next call finds it made.
 *
 * <p>When the proxy's writing ends (its {@code writeTo} returned or threw) the call is settled, on the
 * request's thread, before the response completes: {@link Ended} says how it ended.
 */
final class MeteredServerResponse extends DelegatingServerResponse {

	/** How a response's writing ended. */
	enum Ending {

		/** The whole body was written. */
		COMPLETED,

		/** Writing to the client failed: the client went away. */
		CLIENT_GONE,

		/** Anything else failed: the upstream cut its body, or the proxy failed. */
		FAILED

	}

	/** Settles a call once its response's writing ended. */
	interface Ended {

		void settle(int status, Ending ending);

	}

	private final HttpServletRequest sent;

	private final UsageMeter meter;

	private final Ended ended;

	/**
	 * @param sent the servlet request carrying the body sent upstream: a {@code forward:} route's response
	 * dispatches the request it is written with, which must carry that body
	 */
	MeteredServerResponse(ServerResponse delegate, HttpServletRequest sent, UsageMeter meter, Ended ended) {
		super(delegate);
		this.sent = sent;
		this.meter = meter;
		this.ended = ended;
	}

	@Override
	public @Nullable ModelAndView writeTo(HttpServletRequest request, HttpServletResponse response, Context context)
			throws ServletException, IOException {
		try {
			this.delegate.headers().remove(HttpHeaders.CONTENT_LENGTH);
		}
		catch (UnsupportedOperationException ex) {
			// a response built read-only: its length is dropped on the servlet response below
		}
		Metered metered = new Metered(response, this.meter);
		Ending ending = Ending.FAILED;
		try {
			ModelAndView written = this.delegate.writeTo(this.sent, metered, context);
			metered.finish();
			ending = Ending.COMPLETED;
			return written;
		}
		catch (IOException | ServletException | RuntimeException | Error ex) {
			ending = metered.clientGone() ? Ending.CLIENT_GONE : Ending.FAILED;
			throw ex;
		}
		finally {
			this.ended.settle(this.delegate.statusCode().value(), ending);
		}
	}

	/** The servlet response, its output stream read by the meter. */
	private static final class Metered extends HttpServletResponseWrapper {

		private final UsageMeter meter;

		private @Nullable MeteredOutputStream out;

		Metered(HttpServletResponse response, UsageMeter meter) {
			super(response);
			this.meter = meter;
		}

		@Override
		public ServletOutputStream getOutputStream() throws IOException {
			MeteredOutputStream out = this.out;
			if (out == null) {
				out = new MeteredOutputStream(super.getOutputStream(), this.meter);
				this.out = out;
			}
			return out;
		}

		@Override
		public void setContentLength(int length) {
			// dropped: see the class's comment
		}

		@Override
		public void setContentLengthLong(long length) {
			// dropped: see the class's comment
		}

		@Override
		public void setHeader(String name, String value) {
			if (!isDroppedLength(name)) {
				super.setHeader(name, value);
			}
		}

		@Override
		public void addHeader(String name, String value) {
			if (!isDroppedLength(name)) {
				super.addHeader(name, value);
			}
		}

		private boolean isDroppedLength(String name) {
			return HttpHeaders.CONTENT_LENGTH.equalsIgnoreCase(name);
		}

		/** Writes what the meter still holds (a last event without its blank line). */
		void finish() throws IOException {
			MeteredOutputStream out = this.out;
			if (out != null) {
				out.finish();
			}
		}

		boolean clientGone() {
			MeteredOutputStream out = this.out;
			return out != null && out.clientGone;
		}

	}

	/**
	 * Each write read by the meter, and what it passes on written at once; flushes passed on. Keeps nothing but
	 * a small buffer for a meter's answer without an array: its memory is the meter's, bounded.
	 */
	private static final class MeteredOutputStream extends ServletOutputStream {

		private final ServletOutputStream client;

		private final UsageMeter meter;

		private boolean clientGone;

		private boolean finished;

		MeteredOutputStream(ServletOutputStream client, UsageMeter meter) {
			this.client = client;
			this.meter = meter;
		}

		@Override
		public void write(int b) throws IOException {
			write(new byte[] { (byte) b }, 0, 1);
		}

		@Override
		public void write(byte[] bytes, int offset, int length) throws IOException {
			if (length == 0) {
				return;
			}
			UsageMeter.Passed passed = new UsageMeter.Passed();
			this.meter.pass(ByteBuffer.wrap(bytes, offset, length), passed);
			// written once the meter is done with the slice: a slow client never holds the meter's lock
			byte[] held = passed.held();
			if (held != null) {
				toClient(held, 0, held.length);
			}
			for (int k = 0; k < passed.ranges(); k++) {
				toClient(bytes, offset + passed.from(k), passed.to(k) - passed.from(k));
			}
		}

		@Override
		public void flush() throws IOException {
			try {
				this.client.flush();
			}
			catch (IOException ex) {
				this.clientGone = true;
				throw ex;
			}
		}

		@Override
		public void close() throws IOException {
			// a writer that closes the stream at its end: what the meter holds goes out first
			finish();
			this.client.close();
		}

		void finish() throws IOException {
			if (this.finished) {
				return;
			}
			this.finished = true;
			ByteBuffer rest = this.meter.finish();
			if (rest.hasRemaining()) {
				toClient(rest);
				flush();
			}
		}

		private void toClient(ByteBuffer passed) throws IOException {
			if (!passed.hasRemaining()) {
				return;
			}
			if (passed.hasArray()) {
				toClient(passed.array(), passed.arrayOffset() + passed.position(), passed.remaining());
				return;
			}
			byte[] chunk = new byte[Math.min(passed.remaining(), 8192)];
			ByteBuffer from = passed.duplicate();
			while (from.hasRemaining()) {
				int n = Math.min(chunk.length, from.remaining());
				from.get(chunk, 0, n);
				toClient(chunk, 0, n);
			}
		}

		private void toClient(byte[] bytes, int offset, int length) throws IOException {
			try {
				this.client.write(bytes, offset, length);
			}
			catch (IOException ex) {
				this.clientGone = true;
				throw ex;
			}
		}

		@Override
		public boolean isReady() {
			return this.client.isReady();
		}

		@Override
		public void setWriteListener(WriteListener listener) {
			this.client.setWriteListener(listener);
		}

	}

}

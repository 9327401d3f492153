package io.windowlimiter.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.protocol.CommandType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Notes the last script Lettuce sent (EVALSHA or EVAL), with its KEYS and ARGV, so that redis-benchmark
 * can be given exactly what the library sends, whatever script and arguments the library builds. Listens
 * on the Lettuce client, below the library; used for one probing decision, never while measuring.
 */
final class ScriptRecorder implements CommandListener {

	/** One script run as sent: the SHA (or source) and the KEYS and ARGV. */
	record ScriptCall(String script, List<String> keys, List<String> args) {
	}

	private final AtomicReference<ScriptCall> lastCall = new AtomicReference<>();

	@Override
	public void commandStarted(CommandStartedEvent event) {
		if (event.getCommand().getType() != CommandType.EVALSHA && event.getCommand().getType() != CommandType.EVAL) {
			return;
		}
		ByteBuf encoded = Unpooled.buffer();
		event.getCommand().getArgs().encode(encoded);
		List<String> values = bulkStrings(encoded);
		int keys = Integer.parseInt(values.get(1));
		this.lastCall.set(new ScriptCall(values.get(0), List.copyOf(values.subList(2, 2 + keys)),
				List.copyOf(values.subList(2 + keys, values.size()))));
	}

	/** The last script run, or null. */
	ScriptCall lastCall() {
		return this.lastCall.get();
	}

	/** The arguments as RESP encodes them: {@code $<length>\r\n<bytes>\r\n} each. */
	private static List<String> bulkStrings(ByteBuf encoded) {
		List<String> values = new ArrayList<>();
		while (encoded.isReadable()) {
			if (encoded.readByte() != '$') {
				throw new IllegalStateException("Not a bulk string at " + encoded.readerIndex());
			}
			int length = 0;
			for (byte digit = encoded.readByte(); digit != '\r'; digit = encoded.readByte()) {
				length = length * 10 + (digit - '0');
			}
			encoded.skipBytes(1);
			values.add(encoded.readCharSequence(length, StandardCharsets.UTF_8).toString());
			encoded.skipBytes(2);
		}
		return values;
	}

}

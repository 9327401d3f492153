package io.windowlimiter.accuracy;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleFunction;

/**
 * One chart panel on an {@link Svg}: a box with linear x and y axes that maps data to pixels and
 * draws its own grid, ticks and axis titles.
 */
public final class Plot {

	static final String AXIS = "#333333";

	static final String GRID = "#e5e5e5";

	static final String MUTED = "#666666";

	private final Svg svg;

	private final double left;

	private final double top;

	private final double width;

	private final double height;

	private final double xMin;

	private final double xMax;

	private final double yMin;

	private final double yMax;

	public Plot(Svg svg, double left, double top, double width, double height, double xMin, double xMax, double yMin,
			double yMax) {
		this.svg = svg;
		this.left = left;
		this.top = top;
		this.width = width;
		this.height = height;
		this.xMin = xMin;
		this.xMax = xMax;
		this.yMin = yMin;
		this.yMax = yMax;
	}

	public double x(double value) {
		return this.left + (value - this.xMin) / (this.xMax - this.xMin) * this.width;
	}

	public double y(double value) {
		return this.top + this.height - (value - this.yMin) / (this.yMax - this.yMin) * this.height;
	}

	public double left() {
		return this.left;
	}

	public double top() {
		return this.top;
	}

	public double right() {
		return this.left + this.width;
	}

	public double bottom() {
		return this.top + this.height;
	}

	/** Grid lines and labels at the given x values, the tick labels written by {@code label}. */
	public Plot xTicks(double[] values, DoubleFunction<String> label) {
		for (double value : values) {
			this.svg.line(x(value), top(), x(value), bottom(), GRID, 1, null);
			this.svg.text(x(value), bottom() + 16, label.apply(value), 12, "middle", MUTED, false);
		}
		return this;
	}

	public Plot yTicks(double[] values, DoubleFunction<String> label) {
		for (double value : values) {
			this.svg.line(left(), y(value), right(), y(value), GRID, 1, null);
			this.svg.text(left() - 6, y(value) + 4, label.apply(value), 12, "end", MUTED, false);
		}
		return this;
	}

	/** The axis lines and their titles. */
	public Plot axes(String xTitle, String yTitle) {
		this.svg.line(left(), bottom(), right(), bottom(), AXIS, 1, null);
		this.svg.line(left(), top(), left(), bottom(), AXIS, 1, null);
		if (xTitle != null) {
			this.svg.text((left() + right()) / 2, bottom() + 36, xTitle, 13, "middle", AXIS, false);
		}
		if (yTitle != null) {
			this.svg.verticalText(left() - 44, (top() + bottom()) / 2, yTitle, 13, AXIS);
		}
		return this;
	}

	public Plot title(String title) {
		this.svg.text(left(), top() - 10, title, 14, "start", AXIS, true);
		return this;
	}

	/** A line through data points, each {x, y}, optionally marking each point. */
	public Plot series(List<double[]> points, String colour, double strokeWidth, String dash, boolean markers) {
		List<double[]> pixels = new ArrayList<>();
		for (double[] point : points) {
			pixels.add(new double[] { x(point[0]), y(point[1]) });
		}
		this.svg.polyline(pixels, colour, strokeWidth, dash);
		if (markers) {
			for (double[] pixel : pixels) {
				this.svg.circle(pixel[0], pixel[1], 3.5, colour);
			}
		}
		return this;
	}

	/** A horizontal reference line across the panel, labelled at its right end. */
	public Plot horizontal(double value, String colour, String label) {
		this.svg.line(left(), y(value), right(), y(value), colour, 1.5, "6 4");
		if (label != null) {
			this.svg.text(right() - 4, y(value) - 5, label, 12, "end", colour, false);
		}
		return this;
	}

	/** A vertical reference line down the panel, labelled at its top. */
	public Plot vertical(double value, String colour, String label) {
		this.svg.line(x(value), top(), x(value), bottom(), colour, 1.2, "3 3");
		if (label != null) {
			this.svg.text(x(value) + 4, top() + 12, label, 11, "start", colour, false);
		}
		return this;
	}

	/** A bar from the x axis, {@code barWidth} in data units wide, centred on {@code at}. */
	public Plot bar(double at, double barWidth, double value, String fill) {
		double x1 = x(at - barWidth / 2);
		double x2 = x(at + barWidth / 2);
		this.svg.rect(x1, y(value), x2 - x1, y(this.yMin) - y(value), fill, null);
		return this;
	}

	static String number(double value) {
		String text = String.format(Locale.ROOT, "%.2f", value);
		return text.replaceAll("\\.?0+$", "");
	}

}

/**
 * The one formatter for address counts and shares in the console. Counters arrive as exact
 * decimal strings (an IPv6 /32 holds 2⁹⁶ addresses, beyond a double's exact range), so everything
 * here works on BigInt and the exact value stays available for a tooltip (`exactCount`).
 *
 *   formatCount('256')                    → '256'
 *   formatCount('1208925819614629174706176') → '2⁸⁰'
 *   formatCount('18446744073709551616')   → '2⁶⁴'
 *   formatCount('18400000000000000000')   → '1.8 × 10¹⁹'
 *   formatShare('256', 2⁸⁰)               → '< 0.01 %'
 *   formatUsage('18400000000000000000', 2⁸⁰) → '1.8 × 10¹⁹ of 2⁸⁰ (< 0.01 %)'
 */

const superscript: Record<string, string> = { '0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹', '-': '⁻' };
const sup = (n: number) => String(n).replace(/[0-9-]/g, (c) => superscript[c]);

/** Counts below this are written out with digit grouping. */
const WRITTEN_OUT = 1_000_000_000_000n;

function toBigInt(value: string | number | bigint): bigint | null {
  try {
    return typeof value === 'bigint' ? value : BigInt(value);
  } catch {
    return null;
  }
}

/**
 * A count people can read: grouped digits below a trillion ("65,536"), an exact power of two as
 * one ("2⁸⁰"), anything else as two significant digits times a power of ten ("1.8 × 10¹⁹").
 */
export function formatCount(value: string | number | bigint): string {
  const n = toBigInt(value);
  if (n === null) return String(value);
  if (n < 0n) return `−${formatCount(-n)}`;
  if (n < WRITTEN_OUT) return n.toLocaleString('en-US');
  if ((n & (n - 1n)) === 0n) return `2${sup(n.toString(2).length - 1)}`;
  const digits = n.toString();
  // Round to two significant digits (half up), carrying into the exponent when 9.95… becomes 10.
  let head = Number(digits.slice(0, 3));
  let exponent = digits.length - 1;
  head = Math.round(head / 10);
  if (head >= 100) {
    head = 10;
    exponent += 1;
  }
  const mantissa = head % 10 === 0 ? String(head / 10) : `${Math.floor(head / 10)}.${head % 10}`;
  return `${mantissa} × 10${sup(exponent)}`;
}

/** The exact count with digit grouping (for tooltips and screen readers). */
export function exactCount(value: string | number | bigint): string {
  const n = toBigInt(value);
  return n === null ? String(value) : n.toLocaleString('en-US');
}

/**
 * `part` of `whole` as a percentage, exactly (BigInt): "0 %" only when nothing is used, "< 0.01 %"
 * for any use too small to show, "> 99.9 %" when not quite full, "100 %" when full; otherwise two
 * decimals below 10 % and one above, trailing zeros dropped ("6.25 %", "37.5 %").
 */
export function formatShare(part: string | number | bigint, whole: string | number | bigint): string {
  const p = toBigInt(part);
  const w = toBigInt(whole);
  if (p === null || w === null || w <= 0n) return '—';
  if (p <= 0n) return '0 %';
  if (p >= w) return p === w ? '100 %' : `${formatPercentNumber(Number((p * 1_000n) / w) / 10)} %`;
  // Hundredths of a percent, rounded down so that a non-zero share never reads as 0.
  const tenThousandths = (p * 1_000_000n) / w; // percent × 10,000
  if (tenThousandths < 100n) return '< 0.01 %';
  if (tenThousandths >= 999_000n) return '> 99.9 %';
  return `${formatPercentNumber(Number(tenThousandths) / 10_000)} %`;
}

/** A ratio (0..1) as a percentage by the same rules as `formatShare`, for figures that arrive as numbers. */
export function formatPercent(ratio: number): string {
  if (!Number.isFinite(ratio)) return '—';
  if (ratio <= 0) return '0 %';
  if (ratio >= 1) return ratio === 1 ? '100 %' : `${formatPercentNumber(ratio * 100)} %`;
  const pct = ratio * 100;
  if (pct < 0.01) return '< 0.01 %';
  if (pct >= 99.9) return '> 99.9 %';
  return `${formatPercentNumber(pct)} %`;
}

function formatPercentNumber(pct: number): string {
  const fixed = pct >= 10 ? (Math.floor(pct * 10) / 10).toFixed(1) : (Math.floor(pct * 100) / 100).toFixed(2);
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
}

/** "1.8 × 10¹⁹ of 2⁸⁰ (< 0.01 %)": a used count, its whole and the share, all by the rules above. */
export function formatUsage(part: string | number | bigint, whole: string | number | bigint): string {
  return `${formatCount(part)} of ${formatCount(whole)} (${formatShare(part, whole)})`;
}

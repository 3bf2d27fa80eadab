/**
 * Just enough of Kubernetes' protobuf encoding to read a Namespace that kubectl creates (typed
 * clients send built-in kinds as `application/vnd.kubernetes.protobuf`): the envelope
 * (`k8s\0` + runtime.Unknown) and the Namespace's ObjectMeta name, labels and annotations.
 * Everything else of the message is skipped.
 */

type Fields = Map<number, (Buffer | bigint)[]>;

function readVarint(buf: Buffer, at: number): [bigint, number] {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    if (at >= buf.length) throw new Error('truncated varint');
    const byte = buf[at++];
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value, at];
    shift += 7n;
  }
}

/** The fields of one message, by number (length-delimited ones as Buffers, varints as bigints). */
function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  let at = 0;
  while (at < buf.length) {
    const [tag, next] = readVarint(buf, at);
    at = next;
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    let value: Buffer | bigint;
    if (wire === 0) [value, at] = readVarint(buf, at);
    else if (wire === 2) {
      const [len, start] = readVarint(buf, at);
      value = buf.subarray(start, start + Number(len));
      at = start + Number(len);
    } else if (wire === 1) {
      value = buf.subarray(at, at + 8);
      at += 8;
    } else if (wire === 5) {
      value = buf.subarray(at, at + 4);
      at += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}

const bytes = (f: Fields, n: number) => f.get(n)?.find((v): v is Buffer => Buffer.isBuffer(v));
const text = (f: Fields, n: number) => bytes(f, n)?.toString('utf8');

function stringMap(f: Fields, n: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of f.get(n) ?? []) {
    if (!Buffer.isBuffer(entry)) continue;
    const e = fields(entry);
    out[text(e, 1) ?? ''] = text(e, 2) ?? '';
  }
  return out;
}

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** A protobuf-encoded object's kind and its ObjectMeta's name, labels and annotations. */
export function decodeProtobufObject(body: Buffer): {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; labels: Record<string, string>; annotations: Record<string, string> };
} {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw new Error('not a Kubernetes protobuf object');
  const unknown = fields(body.subarray(4));
  const typeMeta = fields(bytes(unknown, 1) ?? Buffer.alloc(0));
  const object = fields(bytes(unknown, 2) ?? Buffer.alloc(0));
  const meta = fields(bytes(object, 1) ?? Buffer.alloc(0));
  return {
    apiVersion: text(typeMeta, 1) ?? '',
    kind: text(typeMeta, 2) ?? '',
    metadata: { name: text(meta, 1), labels: stringMap(meta, 11), annotations: stringMap(meta, 12) },
  };
}

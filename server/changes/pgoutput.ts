/**
 * A reader of PostgreSQL's `pgoutput` logical decoding messages (protocol version 1), as
 * `pg_logical_slot_get_binary_changes` returns them: one message per row of the result. Only what
 * the change feed needs is kept: transactions (their xid and commit LSN) and the rows inserted,
 * updated and deleted in them, every column as PostgreSQL's text form (null for SQL NULL; a column
 * left out of an update because its TOASTed value did not change is absent).
 */

export type FeedRow = Record<string, string | null>;

export interface FeedChange {
  table: string;
  op: 'insert' | 'update' | 'delete';
  /** The row after an insert or update. */
  row: FeedRow | null;
  /** The row before an update or delete (whole with REPLICA IDENTITY FULL, else its key; null when the update kept the key). */
  old: FeedRow | null;
}

interface Relation {
  table: string;
  columns: string[];
}

/** The decoder's state across messages: relations (sent once per decoding session) and the open transaction. */
export class PgOutputDecoder {
  private relations = new Map<number, Relation>();
  private open: { xid: number; lsn: bigint; changes: FeedChange[] } | null = null;

  /** Forgets the relations (a new decoding session sends them again). */
  reset(): void {
    this.relations.clear();
    this.open = null;
  }

  /** Reads one message; returns a transaction when the message was its commit. */
  read(message: Buffer): { xid: number; lsn: bigint; committedAt: Date; changes: FeedChange[] } | null {
    let at = 1;
    const int8 = () => message.readUInt8(at++);
    const int16 = () => ((at += 2), message.readInt16BE(at - 2));
    const int32 = () => ((at += 4), message.readInt32BE(at - 4));
    const uint32 = () => ((at += 4), message.readUInt32BE(at - 4));
    const int64 = () => ((at += 8), message.readBigUInt64BE(at - 8));
    const string = () => {
      const end = message.indexOf(0, at);
      const s = message.toString('utf8', at, end);
      at = end + 1;
      return s;
    };
    const tuple = (relation: Relation): FeedRow => {
      const n = int16();
      const row: FeedRow = {};
      for (let i = 0; i < n; i++) {
        const kind = String.fromCharCode(int8());
        const column = relation.columns[i] ?? `#${i}`;
        if (kind === 'n') row[column] = null;
        else if (kind === 't' || kind === 'b') {
          const length = int32();
          row[column] = message.toString('utf8', at, at + length);
          at += length;
        }
        // 'u': an unchanged TOASTed value, not sent.
      }
      return row;
    };
    const relationOf = (id: number) => {
      const relation = this.relations.get(id);
      if (!relation) throw new Error(`pgoutput: a change of relation ${id} before its description`);
      return relation;
    };
    switch (String.fromCharCode(message[0])) {
      case 'B': {
        const lsn = int64();
        int64();
        this.open = { xid: uint32(), lsn, changes: [] };
        return null;
      }
      case 'C': {
        int8();
        const lsn = int64();
        int64();
        const micros = int64();
        const txn = this.open;
        this.open = null;
        if (!txn) throw new Error('pgoutput: a commit without its begin');
        // Microseconds since 2000-01-01.
        return { xid: txn.xid, lsn, committedAt: new Date(Number(micros / 1000n) + 946_684_800_000), changes: txn.changes };
      }
      case 'R': {
        const id = uint32();
        string();
        const table = string();
        int8();
        const n = int16();
        const columns: string[] = [];
        for (let i = 0; i < n; i++) {
          int8();
          columns.push(string());
          int32();
          int32();
        }
        this.relations.set(id, { table, columns });
        return null;
      }
      case 'I': {
        const relation = relationOf(uint32());
        int8(); // 'N'
        this.open?.changes.push({ table: relation.table, op: 'insert', row: tuple(relation), old: null });
        return null;
      }
      case 'U': {
        const relation = relationOf(uint32());
        let old: FeedRow | null = null;
        // 'K' or 'O': the old row (or its key) first, then 'N' and the new row.
        if (['K', 'O'].includes(String.fromCharCode(int8()))) {
          old = tuple(relation);
          int8();
        }
        this.open?.changes.push({ table: relation.table, op: 'update', row: tuple(relation), old });
        return null;
      }
      case 'D': {
        const relation = relationOf(uint32());
        int8(); // 'K' or 'O'
        this.open?.changes.push({ table: relation.table, op: 'delete', row: null, old: tuple(relation) });
        return null;
      }
      default:
        // Type ('Y'), origin ('O'), truncate ('T') and logical messages ('M') carry nothing the feed serves.
        return null;
    }
  }
}

/** An LSN as PostgreSQL writes it (`16/B374D848`) as a number. */
export const lsnToBigInt = (lsn: string): bigint => {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
};

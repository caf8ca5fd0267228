// Builds Connect-protocol server-stream response bodies (binary codec) so a
// test can feed the browser very large streams without a runtime: each
// message is enveloped as [flags][length][bytes], followed by the end-stream
// envelope (flags 0x02, JSON "{}").

import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";

export function connectStreamBody<Desc extends DescMessage>(schema: Desc, messages: MessageInitShape<Desc>[]): Buffer {
  const parts: Buffer[] = [];
  for (const m of messages) {
    const bytes = toBinary(schema, create(schema, m));
    const head = Buffer.alloc(5);
    head.writeUInt8(0, 0);
    head.writeUInt32BE(bytes.byteLength, 1);
    parts.push(head, Buffer.from(bytes));
  }
  const end = Buffer.from("{}");
  const endHead = Buffer.alloc(5);
  endHead.writeUInt8(2, 0);
  endHead.writeUInt32BE(end.byteLength, 1);
  parts.push(endHead, end);
  return Buffer.concat(parts);
}

export const CONNECT_STREAM_HEADERS = { "content-type": "application/connect+proto" };

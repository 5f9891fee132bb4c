/** The most bytes of a tunnel's first TLS record the proxy waits for before deciding. */
export const CLIENT_HELLO_MAX_BYTES = 16 * 1024 + 5;

/**
 * What the first bytes of a CONNECT tunnel say: still `incomplete` (wait for more), `not_tls`
 * (some other protocol), or a ClientHello with the server name it asks for (null when it names
 * none). Never throws on hostile input; every length is checked against what is there.
 */
export type ClientHelloReading = { kind: 'incomplete' } | { kind: 'not_tls' } | { kind: 'hello'; serverName: string | null };

export function readClientHello(data: Buffer): ClientHelloReading {
  if (data.length < 1) return { kind: 'incomplete' };
  // A TLS record of type handshake (22).
  if (data[0] !== 0x16) return { kind: 'not_tls' };
  if (data.length < 5) return { kind: 'incomplete' };
  if (data[1] !== 0x03) return { kind: 'not_tls' };
  const recordLength = data.readUInt16BE(3);
  if (recordLength > CLIENT_HELLO_MAX_BYTES - 5) return { kind: 'not_tls' };
  if (data.length < 5 + recordLength) return { kind: 'incomplete' };
  const body = data.subarray(5, 5 + recordLength);
  // Handshake type ClientHello (1), a 3-byte length that fits in this record (no fragmented hellos).
  if (body.length < 4 || body[0] !== 0x01) return { kind: 'not_tls' };
  const helloLength = (body[1]! << 16) | (body[2]! << 8) | body[3]!;
  if (helloLength > body.length - 4) return { kind: 'not_tls' };
  const hello = body.subarray(4, 4 + helloLength);
  let at = 2 + 32; // client version, random
  const skip = (lengthBytes: 1 | 2): boolean => {
    if (at + lengthBytes > hello.length) return false;
    const length = lengthBytes === 1 ? hello[at]! : hello.readUInt16BE(at);
    at += lengthBytes + length;
    return at <= hello.length;
  };
  if (!skip(1) || !skip(2) || !skip(1)) return { kind: 'not_tls' }; // session id, cipher suites, compression
  if (at === hello.length) return { kind: 'hello', serverName: null };
  if (at + 2 > hello.length) return { kind: 'not_tls' };
  const extensionsEnd = at + 2 + hello.readUInt16BE(at);
  if (extensionsEnd > hello.length) return { kind: 'not_tls' };
  at += 2;
  while (at + 4 <= extensionsEnd) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    const start = at + 4;
    if (start + length > extensionsEnd) return { kind: 'not_tls' };
    if (type === 0x0000) return serverNameOf(hello.subarray(start, start + length));
    at = start + length;
  }
  return { kind: 'hello', serverName: null };
}

/** The server_name extension: a list of names, of which the host name (type 0) is the one used. */
function serverNameOf(ext: Buffer): ClientHelloReading {
  if (ext.length < 2) return { kind: 'not_tls' };
  const end = Math.min(ext.length, 2 + ext.readUInt16BE(0));
  let at = 2;
  while (at + 3 <= end) {
    const type = ext[at]!;
    const length = ext.readUInt16BE(at + 1);
    if (at + 3 + length > end) return { kind: 'not_tls' };
    if (type === 0) return { kind: 'hello', serverName: ext.subarray(at + 3, at + 3 + length).toString('latin1') };
    at += 3 + length;
  }
  return { kind: 'hello', serverName: null };
}

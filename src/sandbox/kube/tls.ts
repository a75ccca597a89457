// A self-signed certificate for the optional HTTPS listener. Node can make keys but not X.509
// certificates, so this asks the openssl binary (present wherever kubectl tests run).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface SelfSigned {
  key: string;
  cert: string;
}

export async function selfSignedCert(host: string): Promise<SelfSigned> {
  const dir = await mkdtemp(join(tmpdir(), 'drainer-kube-tls-'));
  try {
    const san = /^[\d.]+$/.test(host) || host.includes(':') ? `IP:${host}` : `DNS:${host}`;
    const alt = [...new Set([san, 'IP:127.0.0.1', 'DNS:localhost'])].join(',');
    // prettier-ignore
    await promisify(execFile)('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '3650',
      '-subj', '/CN=drainer-sandbox', '-addext', `subjectAltName=${alt}`,
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ]);
    const [key, cert] = await Promise.all([
      readFile(join(dir, 'key.pem'), 'utf8'),
      readFile(join(dir, 'cert.pem'), 'utf8'),
    ]);
    return { key, cert };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

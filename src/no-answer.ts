// Words for a request that got no HTTP answer (ground floor: kube/ and plugins/ both use them).
// The system's codes (ECONNREFUSED, ENOTFOUND, a TLS failure …) become one plain cause and a hint
// on what to check; node's own message (OpenSSL file paths and all) stays for --log-level debug.

const TLS_CODES =
  /^(EPROTO|ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)/;

export type NoAnswerKind = 'refused' | 'dns' | 'tls' | 'timeout' | 'network';

export function noAnswerKind(code: string): NoAnswerKind {
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  // TimeoutError: an AbortSignal.timeout that fired (fetch names the abort by its reason)
  if (['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'TimeoutError'].includes(code))
    return 'timeout';
  return TLS_CODES.test(code) ? 'tls' : 'network';
}

/**
 * "connection refused (is the URL right and the service up?)". `setting` names the key a person
 * would change (openstack.auth.authUrl, kubeconfig); `caSetting` the one for a private CA.
 */
export function noAnswerText(
  code: string,
  o: { setting: string; caSetting: string; timeoutMs?: number },
): string {
  switch (noAnswerKind(code)) {
    case 'refused':
      return `connection refused (hint: is ${o.setting} right and the service up?)`;
    case 'dns':
      return `host name not found (hint: check the host in ${o.setting}, and DNS)`;
    case 'timeout': {
      const ms = o.timeoutMs;
      const within = ms ? ` within ${ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`}` : '';
      return `no answer${within} (hint: the service accepted the connection and did not answer, or a firewall drops it; check ${o.setting})`;
    }
    case 'tls':
      return `TLS failed: ${code} (hint: is it an https endpoint? a private CA goes in ${o.caSetting})`;
    default:
      return `no answer: ${code} (hint: check ${o.setting} and the network)`;
  }
}

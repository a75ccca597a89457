// Keystone objects the harness creates for a scenario (projects, users, role assignments,
// application credentials); each registers its own deletion.
import { randomBytes } from 'node:crypto';
import type { Cleanup } from './cleanup.ts';
import { expectStatus, type Session } from './session.ts';

async function del(s: Session, path: string): Promise<void> {
  expectStatus(await s.request('identity', 'DELETE', path), `DELETE ${path}`, 204, 404);
}

export async function roleId(admin: Session, ...names: string[]): Promise<string> {
  const res = expectStatus(await admin.request('identity', 'GET', '/roles'), 'list roles', 200);
  const roles: { id: string; name: string }[] = res.body.roles;
  for (const n of names) {
    const r = roles.find((x) => x.name.toLowerCase() === n.toLowerCase());
    if (r) return r.id;
  }
  throw new Error(`none of the roles ${names.join(', ')} exists`);
}

export async function createProject(admin: Session, cleanup: Cleanup, name: string): Promise<string> {
  const res = await admin.request('identity', 'POST', '/projects', {
    json: { project: { name, domain_id: admin.projectDomainId, description: 'drainer functional test' } },
  });
  const id: string = expectStatus(res, `create project ${name}`, 201).body.project.id;
  cleanup.add(`project ${name}`, async () => {
    // a project must be disabled before Keystone deletes it on some deployments
    await admin.request('identity', 'PATCH', `/projects/${id}`, { json: { project: { enabled: false } } });
    await del(admin, `/projects/${id}`);
  });
  return id;
}

export async function grantRole(
  admin: Session,
  projectId: string,
  userId: string,
  role: string,
): Promise<void> {
  const res = await admin.request('identity', 'PUT', `/projects/${projectId}/users/${userId}/roles/${role}`);
  expectStatus(res, `grant role on ${projectId}`, 204);
}

/** A user with a random password (never logged) in the admin's domain. */
export async function createUser(
  admin: Session,
  cleanup: Cleanup,
  name: string,
  defaultProjectId: string,
): Promise<{ id: string; name: string; password: string }> {
  const password = randomBytes(12).toString('hex');
  const res = await admin.request('identity', 'POST', '/users', {
    json: {
      user: { name, password, domain_id: admin.projectDomainId, default_project_id: defaultProjectId },
    },
  });
  const id: string = expectStatus(res, `create user ${name}`, 201).body.user.id;
  cleanup.add(`user ${name}`, () => del(admin, `/users/${id}`));
  return { id, name, password };
}

/** An application credential of the session's user, scoped to the session's project. */
export async function createAppCredential(
  s: Session,
  cleanup: Cleanup,
  name: string,
): Promise<{ id: string; secret: string }> {
  const res = await s.request('identity', 'POST', `/users/${s.userId}/application_credentials`, {
    json: { application_credential: { name, description: 'drainer functional test' } },
  });
  const ac = expectStatus(res, `create application credential ${name}`, 201).body.application_credential;
  cleanup.add(`application credential ${name}`, () =>
    del(s, `/users/${s.userId}/application_credentials/${ac.id}`),
  );
  return { id: ac.id, secret: ac.secret };
}

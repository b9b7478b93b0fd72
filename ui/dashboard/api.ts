/** What this tab sends with every request: a bearer token and one header of `--http-restricted-api`, both optional. */
export interface AccessSettings {
  readonly token: string;
  readonly headerName: string;
  readonly headerValue: string;
}

const STORAGE_KEY = 'nereid-dashboard-access';
const NO_ACCESS: AccessSettings = { token: '', headerName: '', headerValue: '' };

let access: AccessSettings = NO_ACCESS;

/** Reads the settings kept for this tab (sessionStorage: gone when the tab closes). */
export function loadAccess(): AccessSettings {
  try {
    const kept = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<AccessSettings> | null;
    access = { ...NO_ACCESS, ...kept };
  } catch {
    access = NO_ACCESS;
  }
  return access;
}

export function saveAccess(settings: AccessSettings): void {
  access = settings;
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(settings));
}

export const currentAccess = (): AccessSettings => access;

export function requestHeaders(extra: Record<string, string> = {}): Headers {
  const headers = new Headers(extra);
  if (access.token !== '') headers.set('authorization', `Bearer ${access.token}`);
  if (access.headerName !== '') headers.set(access.headerName, access.headerValue);
  return headers;
}

/** A reply that was not 2xx, with the server's `{"error": "..."}` text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text();
  let message = text;
  try {
    message = (JSON.parse(text) as { error?: string }).error ?? text;
  } catch {
    // Not JSON: the text as it came.
  }
  return new ApiError(response.status, `HTTP ${response.status}: ${message || response.statusText}`);
}

/** GET or POST a KServe v2 path; resolves with the JSON reply (undefined for an empty body). */
export async function api<T>(path: string, init: { readonly method?: 'GET' | 'POST'; readonly body?: unknown } = {}): Promise<T> {
  const response = await fetch(path, {
    method: init.method ?? 'GET',
    headers: requestHeaders(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  if (!response.ok) throw await errorOf(response);
  const text = await response.text();
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

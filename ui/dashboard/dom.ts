/** Builds an element; text goes in as text (never as HTML: model names and reasons come from outside). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Readonly<Record<string, string>> = {},
  ...children: ReadonlyArray<Node | string>
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** Sets a definition list to these terms and values, keeping each dd (and its test id) across updates. */
export function setFacts(list: HTMLElement, facts: ReadonlyArray<readonly [id: string, term: string, value: string]>): void {
  const wanted = new Set(facts.map(([id]) => id));
  for (const child of [...list.children]) if (!wanted.has((child as HTMLElement).dataset.fact ?? '')) child.remove();
  for (const [id, term, value] of facts) {
    let item = list.querySelector<HTMLElement>(`[data-fact="${id}"]`);
    if (item === null) {
      item = el('div', { 'data-fact': id }, el('dt', {}, term), el('dd', { 'data-testid': id }));
      list.append(item);
    }
    item.querySelector('dt')!.textContent = term;
    const dd = item.querySelector('dd')!;
    if (dd.textContent !== value) dd.textContent = value;
  }
}

/** Asks before a destructive action; resolves true when the user confirms. */
export function confirmAction(text: string): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>('confirm');
  byId('confirm-text').textContent = text;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
  });
}

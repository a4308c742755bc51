// The frame around the chat: the sidebar (a drawer on a narrow screen), the search box and the composer's keys.

const $ = (id) => document.getElementById(id);
const NARROW = window.matchMedia('(max-width: 760px)');

function setDrawer(open) {
  const sidebar = $('sidebar');
  const narrow = NARROW.matches;
  sidebar.dataset.open = String(open && narrow);
  // A closed drawer is out of reach of Tab and screen readers, not only out of sight.
  sidebar.inert = narrow && !open;
  $('scrim').hidden = !(open && narrow);
  $('menu').setAttribute('aria-expanded', String(open && narrow));
  if (open && narrow) $('search').focus();
}

/** Grows the message box with its text, up to a limit set in the style sheet. */
function fitComposer() {
  const box = $('message');
  box.style.height = 'auto';
  box.style.height = `${box.scrollHeight}px`;
}

/**
 * Wires the frame: the drawer's button, Escape and scrim; "New chat"; the search box (`onSearch` after a pause
 * in typing); Enter sends (`onSend`), Shift+Enter is a new line.
 */
export function setUpLayout({ onNewChat, onSearch, onSend }) {
  setDrawer(false);
  NARROW.addEventListener('change', () => setDrawer(false));
  $('menu').addEventListener('click', () => setDrawer($('sidebar').dataset.open !== 'true'));
  $('scrim').addEventListener('click', () => setDrawer(false));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && $('sidebar').dataset.open === 'true') {
      setDrawer(false);
      $('menu').focus();
    }
  });
  $('sessions').addEventListener('click', (event) => {
    if (event.target instanceof Element && event.target.closest('a')) setDrawer(false);
  });
  $('new-session').addEventListener('click', () => {
    setDrawer(false);
    onNewChat();
  });
  let searchTimer = 0;
  $('search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(onSearch, 200);
  });
  $('message').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      onSend();
    }
  });
  $('message').addEventListener('input', fitComposer);
}

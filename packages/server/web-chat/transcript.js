// The transcript on screen: one element per item, redrawn one item at a time, the open answer at most once per
// frame and only in its growing part.

import { renderMarkdown } from '/web-chat/markdown.js';
import { questionView } from '/web-chat/questions.js';
import { itemView as anyItemView } from '/web-chat/views.js';

/** The element of an item: a held MCP question's card, or what views.js draws. */
const itemView = (item, actions) =>
  item.kind === 'question' ? questionView(item, actions) : anyItemView(item, actions);

const $ = (id) => document.getElementById(id);
/** The element drawn for each item, so that an event replaces one element, not the transcript. */
const views = new Map();
/** Items whose element is redrawn at the next frame (a burst of chunks costs one redraw per frame). */
const dirty = new Set();
/** The pending redraw's timer (0: none), and the earliest time the next redraw may run. */
let frame = 0;
let nextDrawAt = 0;
/** What the buttons of cards call: `{ decide, continueTurn, windowPassed, answerQuestion }`. */
let actions = {};

/** Sets what the buttons of approval cards call. */
export function setCardActions(cardActions) {
  actions = cardActions;
}

/** Takes an item's element off the page (a refused message), and any redraw of it that was pending. */
export function removeItem(item) {
  dirty.delete(item);
  views.get(item)?.remove();
  views.delete(item);
}

/** Draws `item` at once, dropping a pending redraw of it. */
export function drawNow(item) {
  dirty.delete(item);
  drawItem(item);
}

const atBottom = (list) => list.scrollTop + list.clientHeight >= list.scrollHeight - 40;

/** What the person opened (a tool row, the usage line) stays open when its item is redrawn. */
function keepOpened(current, next) {
  const opened = [...current.querySelectorAll('details')].map((details) => details.open);
  for (const [index, details] of [...next.querySelectorAll('details')].entries()) {
    if (opened[index]) details.open = true;
  }
}

/** Draws (or redraws) one item's element in place. */
export function drawItem(item) {
  const list = $('transcript');
  const scroller = $('scroller');
  const follow = atBottom(scroller);
  const next = itemView(item, actions);
  const current = views.get(item);
  if (current?.isConnected) {
    keepOpened(current, next);
    current.replaceWith(next);
  } else list.append(next);
  views.set(item, next);
  if (follow) scroller.scrollTop = scroller.scrollHeight;
}

/** Redraws an answer still streaming in place, re-rendering only its last blocks. */
function drawGrowingAnswer(item) {
  const scroller = $('scroller');
  const follow = atBottom(scroller);
  renderMarkdown(views.get(item), item.text);
  if (follow) scroller.scrollTop = scroller.scrollHeight;
}

/**
 * Redraws `item` at the next frame, with every other item changed by then (a burst of chunks costs one redraw
 * per frame). A redraw that took c ms waits 3c before the next, so a very long answer, whose Markdown takes
 * longer to parse, still leaves the page most of its time for scrolling and typing.
 */
export function drawSoon(item) {
  dirty.add(item);
  if (frame !== 0) return;
  const wait = Math.max(0, nextDrawAt - performance.now());
  frame = setTimeout(() => {
    requestAnimationFrame(() => {
      const began = performance.now();
      frame = 0;
      for (const each of dirty) {
        if (each.kind === 'assistant' && views.get(each)?.isConnected) drawGrowingAnswer(each);
        else drawItem(each);
      }
      dirty.clear();
      nextDrawAt = performance.now() + 3 * (performance.now() - began);
    });
  }, wait);
}

/** Draws the whole transcript (`items`): on opening a session or reloading its history. */
export function drawAll(items) {
  views.clear();
  dirty.clear();
  const list = $('transcript');
  list.replaceChildren();
  for (const item of items) {
    const view = itemView(item, actions);
    views.set(item, view);
    list.append(view);
  }
  $('empty').hidden = items.length > 0;
  $('scroller').scrollTop = $('scroller').scrollHeight;
}

// Every page of the dashboard, in navigation order. A feature adds its page module here.
// Each page: {id, title, needsOperator?, render(container, {session}) → stop function or null}.
import venue from './venue.js';
import events from './events.js';
import fleet from './fleet.js';
import registry from './registry.js';
import messages from './messages.js';
import devices from './devices.js';
import help from './help.js';
import queues from './queues.js';
import engagement from './engagement.js';
import passes from './passes.js';

export const pageGroups = [
  { id: 'operations', title: 'Operations', pages: [venue, events, fleet, registry] },
  // Applications built on the visitors' phones.
  { id: 'applications', title: 'Applications', pages: [help, queues, engagement, messages, passes, devices] },
];
